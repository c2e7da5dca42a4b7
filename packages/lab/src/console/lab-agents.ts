/**
 * One real tide-agent per lab host (console mode): its configuration (pure), its host token and
 * the files both live in. Agents run in the root namespace: they reach the console on localhost and
 * the data plane over UNIX sockets; each samples only its own host's namespace.
 */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { type ConsoleClient } from "./console-client";
import { type LabHost } from "./fleet.plan";

/** The agent's sampling interval, ms (the console's default, and what its charts expect). */
export const LAB_AGENT_SAMPLE_INTERVAL_MS = 1_000;

export interface LabAgentFiles {
  /** <lab dir>/agents/<hostname>/ (mode 700). */
  dir: string;
  config: string;
  /** The host token, mode 600. */
  tokenFile: string;
  tableDir: string;
  /** The agent's offline buffer on disk (one per agent). */
  spoolDir: string;
  log: string;
}

export function labAgentFiles(labDir: string, hostname: string): LabAgentFiles {
  const dir = path.join(labDir, "agents", hostname);
  return {
    dir,
    config: path.join(dir, "agent.json"),
    tokenFile: path.join(dir, "host-token"),
    tableDir: path.join(dir, "tables"),
    spoolDir: path.join(dir, "spool"),
    log: path.join(labDir, `${hostname}.agent.log`),
  };
}

export interface LabAgentConfigInput {
  host: LabHost;
  consoleUrl: string;
  files: LabAgentFiles;
  /** The node's data plane control socket: tide-director's or tide-redirect's (null: none runs). */
  socket: string | null;
  /** Null when not built: the agent says so and runs without. */
  probesBinary: string | null;
  nsdiagBinary: string | null;
  /** tide-healthcheck, which a director host's agent runs in its namespace (null: not built). */
  healthcheckBinary: string | null;
}

/** The agent's JSON configuration (apps/agent/src/config.ts). */
export function labAgentConfig(o: LabAgentConfigInput): Record<string, unknown> {
  const director = o.host.role === "director";
  return {
    consoleUrl: o.consoleUrl,
    hostTokenFile: o.files.tokenFile,
    hostname: o.host.hostname,
    roles: [o.host.role],
    ...(director
      ? {
          directorSocket: o.socket,
          // The director host's own stack (its management link, topology.ts), not the agent's:
          // health checks leave from there and the proxies answer there.
          healthNetns: o.host.namespace,
          healthcheckBinary: o.healthcheckBinary,
        }
      : { redirectSocket: o.socket }),
    tableDir: o.files.tableDir,
    spoolDir: o.files.spoolDir,
    probesBinary: o.probesBinary,
    nsdiagBinary: o.nsdiagBinary,
    // Five "hosts" share one kernel: each samples its own namespace, not everyone's.
    namespaces: [o.host.namespace],
    sampleIntervalMs: LAB_AGENT_SAMPLE_INTERVAL_MS,
    // No fixed port: several agents (and other labs' agents) run on this machine.
    metricsListen: "",
    // The lab's hosts have no kernel headers for bcc's tools; say off instead of trying each tick.
    bcc: false,
  };
}

/**
 * A fresh host token for the host, written to files.tokenFile (mode 600, directory 700). The host's
 * earlier tokens (a previous lab run's, whose files are gone) are revoked first, so the console
 * holds one live token per lab host however often the lab is rebuilt.
 */
export async function issueHostToken(
  client: ConsoleClient,
  hostname: string,
  files: LabAgentFiles,
): Promise<{ revoked: number }> {
  let revoked = 0;
  for (const t of await client.listHostTokens(hostname)) {
    if (t.revokedAt !== null || t.hostname !== hostname) continue;
    await client.revokeHostToken(t.id);
    revoked++;
  }
  const { token } = await client.createHostToken(hostname);
  mkdirSync(files.dir, { recursive: true, mode: 0o700 });
  chmodSync(files.dir, 0o700);
  writeFileSync(files.tokenFile, `${token}\n`, { mode: 0o600 });
  chmodSync(files.tokenFile, 0o600);
  return { revoked };
}
