import type { RedirectCounters, RedirectVipCounters } from "@tide/contracts";

/** tide-redirect counters for tests: all zero but the ones given. */
export function redirectCounters(c: Partial<RedirectCounters> = {}): RedirectCounters {
  return {
    total: 0,
    accepted_syn: 0,
    accepted_established: 0,
    accepted_syn_cookie: 0,
    accepted_last_resort: 0,
    accepted_udp: 0,
    accepted_icmp: 0,
    accepted_pmtu: 0,
    forwarded_to_self: 0,
    forwarded_to_alternate: 0,
    not_gue: 0,
    dropped_malformed: 0,
    dropped_truncated: 0,
    forward_failed: 0,
    decap_failed: 0,
    ...c,
  };
}

/** One VIP's tide-redirect counters for tests: all zero but the ones given. */
export function vipCounters(c: Partial<RedirectVipCounters> = {}): RedirectVipCounters {
  return {
    forwarded_to_alternate: 0,
    accepted_second_chance: 0,
    accepted_alternate_hash: 0,
    accepted_last_resort: 0,
    accepted_established: 0,
    accepted_syn: 0,
    ...c,
  };
}
