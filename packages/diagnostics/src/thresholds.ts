/**
 * Thresholds several rules share or diagnose options can override, with units and the reasoning
 * behind each. A threshold only one rule uses lives in that rule's file, with its reasoning; rules
 * take thresholds from a constant (or from diagnose options), never from a literal.
 */

/** Rolling window for counter rates, in seconds: Netdata's stock alerts use a 1-minute average. */
export const RATE_WINDOW_S = 60;

/**
 * Least time a counter rate must cover before a rule trusts it, in seconds. Two samples one second
 * apart would turn a single burst of 6 drops into "6/s, critical"; ten seconds keeps an agent that
 * just started from paging anyone while still catching a sustained problem within seconds.
 */
export const MIN_RATE_COVERAGE_S = 10;

/** Counter rate (events/s, 1-minute average) above which a drop counter is warn (Netdata stock). */
export const COUNTER_RATE_WARN_PER_S = 1;

/** Counter rate above which a drop counter is critical (Netdata stock). */
export const COUNTER_RATE_CRITICAL_PER_S = 5;

/**
 * connect() p99 above which a process suffers from source-port search, in µs. Measured on the lab
 * kernel with a 2,000-port range: 22 µs with free ports, 75 µs with half the range held, 109 µs
 * full. 50 µs sits between the free and the half-full cost.
 */
export const CONNECT_P99_WARN_US = 50;

/**
 * Share of the ephemeral range in use above which the kernel's even-first search degrades: once
 * the even half is gone every connect scans it before trying odd ports.
 */
export const CONNECT_RANGE_IN_USE_WARN = 0.5;

/**
 * Longest NET_RX softirq run above which a CPU is stalling packets, in µs. The lab measured 4 µs
 * average and 0.8-2.2 ms max under bulk load, so 10 ms is well outside healthy; 100 ms is the
 * incident itself (100 ms pings while a slow memory.stat read held the CPU).
 */
export const NET_RX_MAX_WARN_US = 10_000;
export const NET_RX_MAX_CRITICAL_US = 100_000;

/**
 * LISTEN sockets on one (namespace, port) above which the listening hash is crowded. The old table
 * had 32 buckets hashed by port only: 1024 sockets on one port is a 1024-long chain every SYN and
 * RST walks. Since 4.17 the lookup also hashes by address, so old kernels are critical, new warn.
 */
export const LISTENER_CROWDING_WARN = 1024;
