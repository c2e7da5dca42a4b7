import type { CounterSnapshot, Sockstat } from "@tide/contracts";

/** nstat-style counter names are the group (TcpExt, Ip, IcmpMsg, ...) followed by the field. */
const COUNTER_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/**
 * Parse /proc/net/netstat or /proc/net/snmp: pairs of lines "Group: F1 F2 ..." / "Group: v1 v2 ...".
 * Returns absolute values keyed as nstat names (TcpExtListenOverflows, IcmpMsgOutType3, ...).
 * Negative values (Tcp MaxConn is -1) and non-integers are skipped: the contract wants u64 counters.
 */
export function parseProcNetCounters(text: string, into: CounterSnapshot = {}): CounterSnapshot {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  for (let i = 0; i + 1 < lines.length; i += 2) {
    const head = headerKeys(lines[i]!);
    const values = lines[i + 1]!;
    const vc = values.indexOf(":");
    if (head === null || vc < 0) continue;
    if (head.group !== values.slice(0, vc)) {
      // Out of step (a truncated read): resynchronise on the next line.
      i -= 1;
      continue;
    }
    const nums = values
      .slice(vc + 1)
      .trim()
      .split(/\s+/);
    const keys = head.keys;
    for (let j = 0; j < keys.length; j++) {
      const key = keys[j];
      const raw = nums[j];
      if (key === null || key === undefined || raw === undefined || !DIGITS.test(raw)) continue;
      into[key] = Number(raw);
    }
  }
  return into;
}

const DIGITS = /^\d+$/;

/**
 * Header lines ("TcpExt: SyncookiesSent ...") never change and repeat in every namespace and tick:
 * their group and checked keys (null = not a valid counter name) are kept, so each tick only splits
 * value lines. Bounded: the kernel has a few dozen distinct header lines.
 */
const headerCache = new Map<string, { group: string; keys: (string | null)[] } | null>();
const HEADER_CACHE_MAX = 256;

function headerKeys(head: string): { group: string; keys: (string | null)[] } | null {
  let h = headerCache.get(head);
  if (h !== undefined) return h;
  const hc = head.indexOf(":");
  if (hc < 0) {
    h = null;
  } else {
    const group = head.slice(0, hc);
    const keys = head
      .slice(hc + 1)
      .trim()
      .split(/\s+/)
      .map((field) => (COUNTER_NAME.test(group + field) ? group + field : null));
    h = { group, keys };
  }
  if (headerCache.size >= HEADER_CACHE_MAX) headerCache.clear();
  headerCache.set(head, h);
  return h;
}

/** Parse the TCP line of /proc/net/sockstat; null when it is missing. */
export function parseSockstat(text: string): Sockstat | null {
  const line = text.split("\n").find((l) => l.startsWith("TCP:"));
  if (line === undefined) return null;
  const tokens = line.slice(4).trim().split(/\s+/);
  const field = (name: string): number | null => {
    const i = tokens.indexOf(name);
    const raw = i >= 0 ? tokens[i + 1] : undefined;
    return raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : null;
  };
  const inuse = field("inuse");
  const orphan = field("orphan");
  const tw = field("tw");
  const alloc = field("alloc");
  const mem = field("mem");
  if (inuse === null || orphan === null || tw === null || alloc === null || mem === null) return null;
  return { tcpInuse: inuse, tcpOrphan: orphan, tcpTw: tw, tcpAlloc: alloc, tcpMemPages: mem };
}
