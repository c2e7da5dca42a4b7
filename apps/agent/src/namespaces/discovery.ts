import { readlinkSync, statSync } from "node:fs";
import { readdir } from "node:fs/promises";

/** Most pids reported per namespace (contract NamespaceObservation.pids). */
export const MAX_PIDS_PER_NAMESPACE = 64;

/** A network namespace found on the host, with a path that enters it. */
export interface DiscoveredNamespace {
  inode: number;
  /** Name under /run/netns, or null (a container or other unnamed namespace). */
  name: string | null;
  root: boolean;
  /** Some pids living in it (sorted, at most 64), excluding the agent's own helpers. */
  pids: number[];
  /** What `nsenter --net=` takes: /run/netns/NAME when named, else /proc/PID/ns/net. */
  path: string;
}

/** Inode of a `readlink /proc/PID/ns/net` target ("net:[4026531840]"), or null. */
export function parseNetnsLink(link: string): number | null {
  const m = /^net:\[(\d+)\]$/.exec(link.trim());
  return m ? Number(m[1]) : null;
}

/**
 * Group named namespaces and processes by namespace inode. The root namespace (the one of PID 1)
 * comes first, then named ones by name, then unnamed ones by inode.
 */
export function groupNamespaces(input: {
  rootInode: number;
  named: readonly { name: string; inode: number }[];
  processes: readonly { pid: number; inode: number }[];
  netnsDir?: string;
  procDir?: string;
}): DiscoveredNamespace[] {
  const netnsDir = input.netnsDir ?? "/run/netns";
  const procDir = input.procDir ?? "/proc";
  const byInode = new Map<number, DiscoveredNamespace>();
  for (const n of [...input.named].sort((a, b) => a.name.localeCompare(b.name))) {
    if (byInode.has(n.inode)) continue; // two names for one namespace: keep the first
    byInode.set(n.inode, {
      inode: n.inode,
      name: n.name,
      root: n.inode === input.rootInode,
      pids: [],
      path: `${netnsDir}/${n.name}`,
    });
  }
  for (const p of [...input.processes].sort((a, b) => a.pid - b.pid)) {
    let ns = byInode.get(p.inode);
    if (ns === undefined) {
      ns = {
        inode: p.inode,
        name: null,
        root: p.inode === input.rootInode,
        pids: [],
        path: `${procDir}/${p.pid}/ns/net`,
      };
      byInode.set(p.inode, ns);
    }
    if (ns.pids.length < MAX_PIDS_PER_NAMESPACE) ns.pids.push(p.pid);
  }
  const all = [...byInode.values()];
  const rank = (n: DiscoveredNamespace): number => (n.root ? 0 : n.name !== null ? 1 : 2);
  return all.sort(
    (a, b) => rank(a) - rank(b) || (a.name ?? "").localeCompare(b.name ?? "") || a.inode - b.inode,
  );
}

/**
 * Find every network namespace: named ones (/run/netns/*) and those of running processes
 * (/proc/PID/ns/net), skipping `excludePids` (the agent's helper shells, which would otherwise keep
 * a deleted namespace visible forever).
 */
export async function discoverNamespaces(options: {
  excludePids?: ReadonlySet<number>;
  procDir?: string;
  netnsDir?: string;
}): Promise<DiscoveredNamespace[]> {
  const procDir = options.procDir ?? "/proc";
  const netnsDir = options.netnsDir ?? "/run/netns";
  const exclude = options.excludePids ?? new Set<number>();

  // The per-file calls are synchronous on purpose: a few hundred readlinks through the libuv
  // threadpool cost about three times the CPU (thread hand-offs) of doing them inline, and each is
  // a few microseconds of /proc lookup, so the event loop waits ~1 ms per thousand processes.
  const named: { name: string; inode: number }[] = [];
  const names = await readdir(netnsDir).catch(() => [] as string[]);
  let dirDev: number | null = null;
  for (const name of names) {
    try {
      const st = statSync(`${netnsDir}/${name}`);
      // An unmounted leftover file has the tmpfs inode of the file itself, not an nsfs inode;
      // nsfs inodes live on the nsfs device, which differs from /run's. Keep it if it is not a regular
      // empty file on /run's device (cheap check: nsfs files report size 0 and mode 0444 as well, so
      // compare devices with the directory).
      dirDev ??= statSync(netnsDir).dev;
      if (st.dev !== dirDev) named.push({ name, inode: st.ino });
    } catch {
      // removed while we looked
    }
  }

  const processes: { pid: number; inode: number }[] = [];
  const entries = await readdir(procDir).catch(() => [] as string[]);
  let rootInode = 0;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (exclude.has(pid)) continue;
    try {
      const inode = parseNetnsLink(readlinkSync(`${procDir}/${pid}/ns/net`));
      if (inode === null) continue;
      if (pid === 1) rootInode = inode;
      processes.push({ pid, inode });
    } catch {
      // exited, or a kernel thread we may not read
    }
  }
  if (rootInode === 0) {
    let self = "";
    try {
      self = readlinkSync(`${procDir}/self/ns/net`);
    } catch {
      // no /proc/self: leave the root unknown
    }
    rootInode = parseNetnsLink(self) ?? 0;
  }
  return groupNamespaces({ rootInode, named, processes, netnsDir, procDir });
}
