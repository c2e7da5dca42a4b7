/**
 * The names `npm run lab -- restart <process>` takes (pure): a process's key in the state file
 * (dir1, dir1.agent, prx2.redirect, prx2.server, prx2.agent, client.load), or the same with the
 * host name the console shows instead of the node (lab-director-1, lab-proxy-2.agent; the "lab-"
 * may be left out: director-1, proxy-2.agent).
 */
import { LabError } from "./errors";

/** What each kind of key names, for --help and errors. */
export const RESTART_NAME_HELP = [
  "dir<N>            tide-director (its table is loaded again: by the lab, or in console mode by its agent)",
  "prx<N>.redirect   tide-redirect on a proxy (second chance, GUE decapsulation)",
  "prx<N>.server     a proxy's test server (HTTP and stream service on the VIP; the health checks' target)",
  "<node>.agent      a host's tide-agent (console mode)",
  "client.load       the background client load",
  "(lab-director-<N>, lab-proxy-<N>[.agent|.redirect|.server]: the console's host names work too)",
];

/**
 * The state file key `name` means, among `keys` (the recorded processes); `hosts` maps console host
 * names to nodes. Throws bad_argument listing the recorded names when it names none or several.
 */
export function resolveRestartName(
  name: string,
  keys: readonly string[],
  hosts: readonly { name: string; hostname: string }[],
): string {
  if (keys.includes(name)) return name;
  const dot = name.indexOf(".");
  const node = dot < 0 ? name : name.slice(0, dot);
  const suffix = dot < 0 ? "" : name.slice(dot);
  const host = hosts.find((h) => h.hostname === node || h.hostname === `lab-${node}`);
  if (host && keys.includes(`${host.name}${suffix}`)) return `${host.name}${suffix}`;
  const nodeName = host?.name ?? node;
  const ofNode = suffix === "" ? keys.filter((k) => k.startsWith(`${nodeName}.`)) : [];
  if (ofNode.length > 0) {
    throw new LabError(
      "bad_argument",
      `${JSON.stringify(name)} runs several processes: name one of ${ofNode.join(", ")}`,
      { processes: [...keys] },
    );
  }
  throw new LabError(
    "bad_argument",
    `no lab process ${JSON.stringify(name)}; the lab's processes: ${keys.join(", ") || "none"}`,
    { processes: [...keys] },
  );
}
