/**
 * Thresholds of every rule, with units and the reasoning behind each. Rules take them from here
 * (or from diagnose options), never from literals.
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
 * The kernel's default net.core.somaxconn since 5.4 (4096): what a new network namespace starts
 * with, whatever the host's root namespace was set to.
 */
export const KERNEL_DEFAULT_SOMAXCONN = 4096;

/**
 * SYN cookie completion ratio (SyncookiesRecv / SyncookiesSent) below which cookie traffic looks
 * like a real flood: spoofed SYNs never come back with the final ACK, legitimate clients do.
 */
export const SYN_FLOOD_COMPLETION_RATIO = 0.1;

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

/** Fewest connect() calls in the window for a p99 to mean something (1% of 100 is one call). */
export const CONNECT_MIN_CALLS = 100;

/** EADDRNOTAVAIL per second (window average) above which connect failures are critical: any. */
export const CONNECT_EADDRNOTAVAIL_CRITICAL_PER_S = 0;

/**
 * Longest NET_RX softirq run above which a CPU is stalling packets, in µs. The lab measured 4 µs
 * average and 0.8-2.2 ms max under bulk load, so 10 ms is well outside healthy; 100 ms is the
 * incident itself (100 ms pings while a slow memory.stat read held the CPU).
 */
export const NET_RX_MAX_WARN_US = 10_000;
export const NET_RX_MAX_CRITICAL_US = 100_000;

/**
 * tcp_rmem max above which receive-buffer collapsing gets expensive, in bytes: 32 MiB gave 21 ms
 * of collapse in softirq, 4 MiB a few ms. The kernel default is 6 MiB.
 */
export const TCP_RMEM_LARGE_BYTES = 8 * 1024 * 1024;

/** A sane tcp_rmem to suggest: the kernel defaults (4 KiB, 128 KiB, 6 MiB). */
export const TCP_RMEM_SUGGESTED: readonly [number, number, number] = [4096, 131072, 6291456];

/**
 * LISTEN sockets on one (namespace, port) above which the listening hash is crowded. The old table
 * had 32 buckets hashed by port only: 1024 sockets on one port is a 1024-long chain every SYN and
 * RST walks. Since 4.17 the lookup also hashes by address, so old kernels are critical, new warn.
 */
export const LISTENER_CROWDING_WARN = 1024;

/** First kernel (major, minor) whose listening lookup hashes by address and port (lhash2). */
export const LISTENER_HASH_BY_ADDRESS_SINCE: readonly [number, number] = [4, 17];

/** MTU of plain Ethernet: a path check below it on a 1500 link means an MTU step on the path. */
export const ETHERNET_MTU = 1500;
