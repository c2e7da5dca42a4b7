/**
 * Kernel health end to end (root): a real accept queue overflow in network namespaces (packages/lab
 * incident 1) -> the real agent, in-process, samples it -> the real console (`next start` of the
 * production build, like console-link.integration-test.ts) on a throwaway PostgreSQL stores the
 * samples and opens an accept_queue_overflow finding for this host, the incident's server namespace
 * and port -> remedy() -> the 1-minute window goes quiet and the console resolves the finding.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createDb, type Db } from "@tide/db";
import { describe, expect, it } from "vitest";
import { migrate } from "../../../packages/devstack/src/migrations";
import {
  freePort,
  startTempCluster,
  type TempCluster,
} from "../../../packages/devstack/src/postgres-cluster";
import {
  setup,
  type AcceptQueueHandle,
  ACCEPT_QUEUE_PREFIX,
} from "../../../packages/lab/src/incidents/accept-queue";
import { listNamespaces } from "../../../packages/lab/src/host-command";
import { counterDelta, readNetCounters } from "../../../packages/lab/src/incidents/namespace";
import { Agent } from "./agent";
import {
  CONSOLE_DIR,
  loadApiFixtures,
  startConsole,
  stopConsole,
  type ConsoleProcess,
} from "./testing/console-process";
import { resolveConfig } from "./config";

const HOST = "agent-e2e-01";

interface NetnsRef {
  inode: number;
  name: string | null;
  root: boolean;
}
interface FindingRecord {
  id: string;
  kind: string;
  status: string;
  severity: string;
  subject: { hostId: string; netns: NetnsRef | null; port: number | null };
  evidence: { metric: string; value: number }[];
  resolvedAt: string | null;
}
interface FindingDetail extends FindingRecord {
  history: { type: string; at: string; detail: string }[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns a value, every second, for at most timeoutMs. */
async function poll<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(1000);
  }
}

describe("kernel health end to end", () => {
  it("an accept queue overflow in a namespace opens a finding in the console; the remedy resolves it", async () => {
    if (!existsSync(path.join(CONSOLE_DIR, ".next/BUILD_ID"))) {
      throw new Error(
        "no console build (apps/console/.next/BUILD_ID): run `npx turbo run build --filter=@tide/console`",
      );
    }
    const t0 = Date.now();
    const mark = (what: string) => console.log(`[e2e] +${((Date.now() - t0) / 1000).toFixed(1)} s ${what}`);
    let cluster: TempCluster | undefined;
    let db: Db | undefined;
    let server: ConsoleProcess | undefined;
    let agent: Agent | undefined;
    let incident: AcceptQueueHandle | undefined;
    const dir = mkdtempSync(path.join(tmpdir(), "tide-agent-e2e-"));
    const logs: string[] = [];
    try {
      // console + database
      cluster = await startTempCluster();
      await migrate(cluster.url, { quiet: true });
      db = createDb(cluster.url, { max: 2 });
      const { makeUser, callerFor } = await loadApiFixtures();
      const admin = await makeUser(db, "admin");
      const api = callerFor(db, admin);
      const hostToken = (await api.hostTokens.create({ hostname: HOST })).token;
      const apiToken = (await api.tokens.create({ name: "agent-e2e", scopes: [...admin.scopes] })).token;
      const port = await freePort();
      const consoleUrl = `http://127.0.0.1:${port}`;
      server = await startConsole(port, cluster.url);
      mark("console healthy");
      const get = async <T>(p: string): Promise<T> => {
        const res = await fetch(`${consoleUrl}/api/v1${p}`, {
          headers: { authorization: `Bearer ${apiToken}` },
        });
        if (res.status !== 200) throw new Error(`GET ${p}: HTTP ${res.status} ${await res.text()}`);
        return (await res.json()) as T;
      };

      // the incident's namespaces exist before the agent starts, so its discovery sees them
      incident = await setup({ requestedBacklog: 1024, somaxconn: 10, acceptIntervalMs: 500 });
      const serverNs = incident.namespaces.server.name;
      expect(serverNs.startsWith(ACCEPT_QUEUE_PREFIX)).toBe(true);
      expect((await incident.listener()).sendQ).toBe(10);

      const tokenFile = path.join(dir, "host-token");
      writeFileSync(tokenFile, `${hostToken}\n`, { mode: 0o600 });
      const config = resolveConfig([
        {
          consoleUrl,
          hostTokenFile: tokenFile,
          hostname: HOST,
          roles: ["proxy"],
          metricsListen: "",
          sampleIntervalMs: 1000,
          tableDir: path.join(dir, "tables"),
        },
      ]);
      let delivered = 0;
      agent = new Agent(config, (line) => logs.push(line), {
        onDelivered: (b) => (delivered += b.accepted),
      });
      await agent.start();
      // more than MIN_RATE_COVERAGE_S (10 s) of samples in the console before the burst
      await poll("12 delivered samples", async () => (delivered >= 12 ? true : undefined), 30_000);
      mark(`agent delivered ${delivered} samples`);
      const before = await get<FindingRecord[]>(
        `/findings?hostId=${HOST}&status=open&kind=accept_queue_overflow`,
      );
      expect(before).toEqual([]);

      // the incident: a burst against the capped backlog of a slow acceptor
      const burst = await incident.trigger({ count: 300, durationMs: 3_000 });
      mark(`burst ${JSON.stringify(burst)}`);

      const isOurs = (f: FindingRecord) =>
        f.kind === "accept_queue_overflow" &&
        f.subject.hostId === HOST &&
        f.subject.netns?.name === serverNs &&
        (f.subject.port === null || f.subject.port === incident!.port);
      const opened = await poll(
        "an open accept_queue_overflow finding",
        async () => (await get<FindingRecord[]>(`/findings?hostId=${HOST}&status=open`)).find(isOurs),
        45_000,
      );
      mark(
        `finding ${opened.id} open: ${opened.severity}, port ${opened.subject.port}, ` +
          `ListenOverflows ${opened.evidence.find((e) => e.metric === "TcpExtListenOverflows")?.value.toFixed(2)}/s`,
      );
      expect(opened).toMatchObject({
        kind: "accept_queue_overflow",
        status: "open",
        subject: { hostId: HOST, netns: { name: serverNs, root: false } },
      });
      expect(["warn", "critical"]).toContain(opened.severity);
      const rate = opened.evidence.find((e) => e.metric === "TcpExtListenOverflows");
      expect(rate?.value).toBeGreaterThan(1);
      // without tide-probes the port comes from ss (Recv-Q above Send-Q in some sample); a burst that
      // no 1 s sample caught mid-overflow gives the namespace-wide finding (port null)
      const ours = (await get<FindingRecord[]>(`/findings?hostId=${HOST}&status=open`)).filter(isOurs);
      mark(`open findings of the incident: ${ours.map((f) => `${f.id} port ${f.subject.port}`).join(", ")}`);
      for (const f of ours) expect([null, incident.port]).toContain(f.subject.port);

      // the remedy; the agent keeps sampling until the 1-minute window no longer holds the burst
      await incident.remedy();
      expect((await incident.listener()).sendQ).toBe(1024);
      mark("remedy applied");
      // the same load again: with the raised backlog it must not overflow, so the window goes quiet
      // because of the remedy and not only because the burst stopped
      const countersBefore = await readNetCounters(serverNs);
      const again = await incident.trigger({ count: 300, durationMs: 3_000 });
      const countersAfter = await readNetCounters(serverNs);
      expect(counterDelta(countersBefore, countersAfter, "TcpExt", "ListenOverflows")).toBe(0);
      mark(`burst after remedy ${JSON.stringify(again)}`);
      expect(again.connected).toBe(300);
      const resolved = await poll(
        "the finding to resolve",
        async () => {
          const f = await get<FindingDetail>(`/findings/${opened.id}`);
          return f.status === "resolved" ? f : undefined;
        },
        100_000,
      );
      mark(`finding resolved at ${resolved.resolvedAt}`);
      const types = resolved.history.map((h) => h.type);
      expect(types[0]).toBe("opened");
      expect(types).toContain("resolved");
      expect(types.at(-1)).toBe("resolved");
      expect(resolved.history.find((h) => h.type === "resolved")?.detail).toMatch(/cleared/);
      expect(resolved.resolvedAt).not.toBeNull();
      const stillOpen = await get<FindingRecord[]>(`/findings?hostId=${HOST}&status=open`);
      expect(stillOpen.filter(isOurs)).toEqual([]);
      expect(logs.join("\n")).not.toContain(hostToken);
    } finally {
      agent?.stop();
      await stopConsole(server);
      await db?.$disconnect();
      await cluster?.stop();
      await incident?.teardown();
      rmSync(dir, { recursive: true, force: true });
      mark("torn down");
    }
    expect((await listNamespaces()).filter((n) => n.startsWith(ACCEPT_QUEUE_PREFIX))).toEqual([]);
  }, 240_000);
});
