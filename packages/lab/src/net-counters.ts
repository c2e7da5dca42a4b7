/**
 * The kernel's per-namespace protocol counters (/proc/net/snmp and /proc/net/netstat), read inside
 * a lab namespace. Without tide-redirect a proxy's `Udp.NoPorts` counts the GUE datagrams that
 * reached it; `TcpExt.ListenOverflows`, `TcpExt.SyncookiesSent` and `Icmp.OutDestUnreachs` serve
 * the SYN-flood and PMTU scenarios.
 */

/** Counters by group (Ip, Icmp, Tcp, Udp, TcpExt, IpExt, ...) and name. */
export type NetCounters = Record<string, Record<string, number>>;

/** Parses the "Group: names..." / "Group: values..." line pairs both files use. */
export function parseNetCounters(text: string): NetCounters {
  const out: NetCounters = {};
  const lines = text.split("\n").filter((l) => l.includes(":"));
  for (let i = 0; i + 1 < lines.length; i += 2) {
    const head = lines[i]!;
    const values = lines[i + 1]!;
    const group = head.slice(0, head.indexOf(":"));
    if (values.slice(0, values.indexOf(":")) !== group) {
      i -= 1; // out of step: resynchronise on the next line
      continue;
    }
    const names = head
      .slice(group.length + 1)
      .trim()
      .split(/\s+/);
    const nums = values
      .slice(group.length + 1)
      .trim()
      .split(/\s+/);
    const g: Record<string, number> = (out[group] ??= {});
    names.forEach((n, k) => {
      const v = Number(nums[k]);
      if (n && Number.isFinite(v)) g[n] = v;
    });
  }
  return out;
}

/** counters b - a, per group and name (names missing in a count from 0). */
export function diffNetCounters(a: NetCounters, b: NetCounters): NetCounters {
  const out: NetCounters = {};
  for (const [group, values] of Object.entries(b)) {
    const before = a[group] ?? {};
    const g: Record<string, number> = (out[group] = {});
    for (const [name, v] of Object.entries(values)) g[name] = v - (before[name] ?? 0);
  }
  return out;
}
