import type { NamespaceSysctls } from "@tide/contracts";

/** The sysctls sampled per namespace, as paths under /proc/sys. */
export const SYSCTL_PATHS = {
  somaxconn: "net/core/somaxconn",
  tcpMaxSynBacklog: "net/ipv4/tcp_max_syn_backlog",
  tcpSyncookies: "net/ipv4/tcp_syncookies",
  tcpRmem: "net/ipv4/tcp_rmem",
  ipLocalPortRange: "net/ipv4/ip_local_port_range",
  tcpMtuProbing: "net/ipv4/tcp_mtu_probing",
} as const satisfies Record<keyof NamespaceSysctls, string>;

function ints(raw: string | undefined): number[] | null {
  if (raw === undefined) return null;
  const parts = raw.trim().split(/\s+/);
  if (parts.length === 0 || !parts.every((p) => /^\d+$/.test(p))) return null;
  return parts.map(Number);
}

function mode(raw: string | undefined): 0 | 1 | 2 | null {
  const v = ints(raw);
  const n = v?.[0];
  return v?.length === 1 && (n === 0 || n === 1 || n === 2) ? n : null;
}

/** Turn raw sysctl texts (keyed by path under /proc/sys; missing = unreadable) into the contract shape. */
export function parseSysctls(raw: ReadonlyMap<string, string>): NamespaceSysctls {
  const single = (path: string): number | null => {
    const v = ints(raw.get(path));
    return v?.length === 1 ? v[0]! : null;
  };
  const rmem = ints(raw.get(SYSCTL_PATHS.tcpRmem));
  const range = ints(raw.get(SYSCTL_PATHS.ipLocalPortRange));
  return {
    somaxconn: single(SYSCTL_PATHS.somaxconn),
    tcpMaxSynBacklog: single(SYSCTL_PATHS.tcpMaxSynBacklog),
    tcpSyncookies: mode(raw.get(SYSCTL_PATHS.tcpSyncookies)),
    tcpRmem: rmem?.length === 3 ? [rmem[0]!, rmem[1]!, rmem[2]!] : null,
    ipLocalPortRange:
      range?.length === 2 && range[0]! <= 65535 && range[1]! <= 65535 ? [range[0]!, range[1]!] : null,
    tcpMtuProbing: mode(raw.get(SYSCTL_PATHS.tcpMtuProbing)),
  };
}

/** Parse `grep -H .` output run in /proc/sys: "net/core/somaxconn:4096" (unreadable files are absent). */
export function parseSysctlLines(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split("\n")) {
    const eq = line.indexOf(":");
    if (eq <= 0) continue;
    const value = line.slice(eq + 1);
    if (value.trim() !== "") out.set(line.slice(0, eq), value);
  }
  return out;
}
