/* SPDX-License-Identifier: MIT */
/*
 * tide-director's JSON configuration file: parsed at start, validated key by key; parsed again
 * on SIGHUP, when service.c applies what may change live (reload_plan.h) to the running struct.
 * set_gateway changes the live encapsulation parameters, not this struct.
 */
#ifndef TIDE_DIRECTOR_CONFIG_H
#define TIDE_DIRECTOR_CONFIG_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "tide_glbd.h"

#define CONFIG_DEFAULT_CONTROL_SOCKET "/run/tide/director.sock"
#define CONFIG_DEFAULT_MTU 1500u
#define CONFIG_DEFAULT_BURST 32u
#define CONFIG_DEFAULT_MBUFS 8191u
/* Outer IP packet size limits: IPv4 minimum MTU .. a 9216-byte jumbo frame. */
#define CONFIG_MTU_MIN 576u
#define CONFIG_MTU_MAX 9216u
#define CONFIG_BURST_MAX 512u
#define CONFIG_MBUFS_MIN 1023u
#define CONFIG_MBUFS_MAX (1u << 24)
#define CONFIG_POOL_NAME_MAX 64u /* bytes, including the terminating NUL */
/* sizeof(sockaddr_un.sun_path) */
#define CONFIG_SOCKET_PATH_MAX 108u

struct director_config {
	char control_socket[CONFIG_SOCKET_PATH_MAX];
	char table_file[PATH_MAX]; /* "" when not configured */
	char pool_names[TIDE_MAX_TABLES][CONFIG_POOL_NAME_MAX];
	uint32_t num_pool_names;
	uint8_t hash_fields;	 /* TIDE_HASH_* */
	uint8_t alt_hash_fields; /* 0: no migration */
	uint8_t gateway_mac[6];
	uint32_t source_ip;	/* network order */
	uint32_t mtu;		/* largest outer IP packet, bytes */
	uint32_t burst;		/* packets per rx/tx burst */
	uint32_t mbufs;		/* mbufs in the packet pool */
	uint32_t idle_sleep_us; /* sleep when a loop found no packet; 0 = busy-poll */
};

/*
 * Reads and validates `path`. Returns 0, or -EINVAL / -errno with a message naming the key
 * in `err`.
 */
int config_load(const char *path, struct director_config *cfg, char *err, size_t err_len);

/*
 * The command line's overrides, applied after config_load (at start and at every reload):
 * `control` (--control) replaces control_socket, `table` (--table) table_file; NULL leaves the
 * key alone. Returns 0, or -EINVAL with a message in `err`.
 */
int config_override(struct director_config *cfg, const char *control, const char *table, char *err,
		    size_t err_len);

/* Strict "aa:bb:cc:dd:ee:ff" (hex, either case). Returns 0 or -EINVAL. */
int config_parse_mac(const char *s, uint8_t mac[6]);

/* Dotted-quad IPv4 address into network order. Returns 0 or -EINVAL. */
int config_parse_ipv4(const char *s, uint32_t *addr);

/* Name of one TIDE_HASH_* bit ("src_addr", ...). */
const char *config_hash_field_name(unsigned int bit);

/* Validates a list of pool names (non-empty, unique, < CONFIG_POOL_NAME_MAX bytes). */
int config_check_pool_names(const char *const *names, uint32_t n, char *err, size_t err_len);

#endif /* TIDE_DIRECTOR_CONFIG_H */
