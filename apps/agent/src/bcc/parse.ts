import { log2Bucket } from "@tide/diagnostics";

/**
 * Parsers for bcc tools' text output (iovisor/bcc tools/*.py as packaged by Debian, `*-bpfcc`).
 * Their output is for humans: parse defensively, skip what does not fit, never throw.
 */

export interface TcpConnLatEvent {
  pid: number;
  comm: string;
  family: 4 | 6;
  saddr: string;
  daddr: string;
  dport: number;
  latencyUs: number;
}

/**
 * One line of `tcpconnlat` (no -t, no -L):
 *   `PID    COMM         IP SADDR            DADDR            DPORT LAT(ms)`
 *   `1201   wget         4  10.153.223.157   23.23.100.231    80    1.65`
 * COMM may hold spaces (task comm), so fields are taken from both ends. Header and anything
 * else give null.
 */
export function parseTcpConnLatLine(line: string): TcpConnLatEvent | null {
  const f = line.trim().split(/\s+/);
  if (f.length < 7) return null;
  const pid = Number(f[0]);
  const lat = Number(f[f.length - 1]);
  const dport = Number(f[f.length - 2]);
  const daddr = f[f.length - 3]!;
  const saddr = f[f.length - 4]!;
  const family = Number(f[f.length - 5]);
  const comm = f.slice(1, f.length - 5).join(" ");
  if (!Number.isInteger(pid) || pid < 1) return null;
  if (family !== 4 && family !== 6) return null;
  if (!Number.isInteger(dport) || dport < 0 || dport > 65535) return null;
  if (!Number.isFinite(lat) || lat < 0) return null;
  if (comm === "" || !/[.:]/.test(saddr) || !/[.:]/.test(daddr)) return null;
  return { pid, comm: comm.slice(0, 15), family, saddr, daddr, dport, latencyUs: lat * 1000 };
}

/**
 * `softirqs -d` output (bcc's print_log2_hist, one section per softirq):
 *
 *   softirq = net_rx
 *        usecs               : count     distribution
 *            0 -> 1          : 0        |                                        |
 *            2 -> 3          : 1        |****                                    |
 *
 * bcc's slot "lo -> hi" holds [lo, hi] µs: lo = 0 is the contract's bucket 0 ([0, 2)), otherwise
 * log2(lo). Returns the histograms per softirq name in the order seen (trailing zeros dropped).
 * Older bcc prints the action function (net_rx_action); the "_action" suffix is dropped.
 */
export function parseSoftirqsDist(text: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  let current: number[] | null = null;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const section = /^softirq\s*=\s*([A-Za-z_][A-Za-z0-9_]*)$/.exec(line);
    if (section) {
      const name = section[1]!.replace(/_action$/, "").slice(0, 32);
      current = out.get(name) ?? [];
      out.set(name, current);
      continue;
    }
    const row = /^(\d+)\s*->\s*(\d+)\s*:\s*(\d+)/.exec(line);
    if (row && current) {
      const lo = Number(row[1]);
      const count = Number(row[3]);
      const i = log2Bucket(lo);
      while (current.length <= i) current.push(0);
      current[i] = (current[i] ?? 0) + count;
    }
  }
  for (const [name, h] of out) {
    let end = h.length;
    while (end > 0 && h[end - 1] === 0) end--;
    out.set(name, h.slice(0, end));
  }
  return out;
}
