/** Taking a lab down: everything a run left, whether or not its Lab handle still exists. */
import { readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { readStateFile, type LabPaths } from "./lab-files";
import { stopPid, stopProcess } from "./lab-process";
import { listNamespaces, namespacePids, runCommand } from "./host-command";

/** Where DPDK's EAL keeps each run's runtime directory (/var/run/dpdk/<file prefix>). */
export const DPDK_RUNTIME_DIR = "/var/run/dpdk";

export const noLog = () => {};

/**
 * Removes what a run left: recorded processes (SIGTERM first: tide-redirect detaches its BPF
 * program then; tide-director removes its socket), every process still in a <prefix>-* namespace,
 * the namespaces (their veths go with them), EAL runtime directories and the state directory.
 */
export async function removeLab(prefix: string, paths: LabPaths, log: (line: string) => void): Promise<void> {
  const state = readStateFile(paths.stateFile);
  if (state) {
    // Agents first: a director stopping under its agent is reported as a finding, not a shutdown.
    const agents = state.processes.filter((p) => p.kind === "agent" || p.kind === "client-load");
    await Promise.all(agents.map((p) => stopProcess(p, 5_000, true)));
    const rest = state.processes.filter((p) => !agents.includes(p));
    await Promise.all(rest.map((p) => stopProcess(p, p.kind === "director" ? 10_000 : 5_000)));
    if (state.console) {
      log(
        `stopped ${agents.filter((p) => p.kind === "agent").length} agents and removed their host tokens' files; ` +
          `the console at ${state.console.url} keeps pool ${state.console.poolName}, its proxies and directors`,
      );
    }
  }
  const namespaces = (await listNamespaces()).filter((n) => n.startsWith(`${prefix}-`));
  for (const namespace of namespaces) {
    for (const pid of await namespacePids(namespace)) await stopPid(pid);
    await runCommand(["ip", "netns", "del", namespace], { allowFailure: true });
  }
  if (namespaces.length > 0) log(`removed ${namespaces.length} namespaces`);
  const dpdkPrefixes = new Set(state?.dpdkPrefixes ?? []);
  try {
    for (const d of readdirSync(DPDK_RUNTIME_DIR)) if (d.startsWith(`${prefix}-`)) dpdkPrefixes.add(d);
  } catch {
    /* no runtime directory at all */
  }
  for (const p of dpdkPrefixes) rmSync(path.join(DPDK_RUNTIME_DIR, p), { recursive: true, force: true });
  rmSync(paths.dir, { recursive: true, force: true });
}
