/* SPDX-License-Identifier: MIT */
/*
 * GUE on the wire, as glb-director writes it: the one place its port, header sizes and inner
 * protocol numbers are declared. Plain defines only, so tide-director, the BPF program of tide-redirect, the daemons
 * and the tests can all include it. packages/contracts/src/gue-wire.ts holds the same numbers for
 * TypeScript, and its unit test reads this file to check they agree.
 */
#ifndef TIDE_GUE_WIRE_H
#define TIDE_GUE_WIRE_H

/* UDP destination port of GUE packets (glb-director's). */
#define TIDE_GUE_PORT 19523u

/* Header lengths, bytes. The outer IPv4 header carries no options (the director writes none). */
#define TIDE_ETH_HLEN 14u
#define TIDE_OUTER_IP_HLEN 20u
#define TIDE_UDP_HLEN 8u
#define TIDE_GUE_BASE_HLEN 4u
#define TIDE_GLB_PRIV_HLEN 4u
/* One hop of the GLB private data: an IPv4 address. */
#define TIDE_GLB_HOP_LEN 4u

/* The GUE base header's proto field: the IP protocol number of the inner packet (IPv4, IPv6). */
#define TIDE_GUE_PROTO_IPV4 4u
#define TIDE_GUE_PROTO_IPV6 41u

#endif /* TIDE_GUE_WIRE_H */
