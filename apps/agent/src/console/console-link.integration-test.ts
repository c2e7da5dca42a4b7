/**
 * The real agent against a real console: `next start` of apps/console's production build (the way
 * e2e/support/stack.ts starts it) on a free port, against the integration tier's throwaway
 * PostgreSQL. The agent runs in-process (Agent: real sampling, real ConsoleLink over HTTP).
 */
import { randomBytes } from "node:crypto";
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createDb, type Db } from "@tide/db";
import {
  CONSOLE_DIR,
  freePort,
  loadApiFixtures,
  startConsole,
  stopConsole,
  waitFor,
  type ConsoleProcess,
} from "@tide/devstack";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Agent } from "../agent";
import { resolveConfig } from "../config";
import { storedSampleTimes } from "./testing";

declare module "vitest" {
  /** From packages/devstack's integration global setup: a fresh, migrated database. */
  interface ProvidedContext {
    databaseUrl: string;
  }
}

const HOST = "agent-it-01";
/** The host of the restart test: an agent restarted while the console is down. */
const HOST_RESTART = "agent-it-02";

const until = (what: string, cond: () => boolean, timeoutMs = 30_000) => waitFor(what, cond, { timeoutMs });

let db: Db;
let databaseUrl: string;
let port: number;
let consoleUrl: string;
let server: ConsoleProcess | undefined;
let dir: string;
let hostToken: string;
let apiToken: string;
let restartToken: string;

function agentFor(
  token: string,
  logs: string[],
  hooks: ConstructorParameters<typeof Agent>[2] = {},
  o: { hostname?: string; consoleUrl?: string; spoolDir?: string | null } = {},
): Agent {
  const tokenFile = path.join(dir, `token-${randomBytes(4).toString("hex")}`);
  writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  const config = resolveConfig([
    {
      consoleUrl: o.consoleUrl ?? consoleUrl,
      hostTokenFile: tokenFile,
      hostname: o.hostname ?? HOST,
      roles: ["proxy"],
      metricsListen: "",
      sampleIntervalMs: 1000,
      tableDir: path.join(dir, "tables"),
      spoolDir: o.spoolDir === undefined ? null : o.spoolDir,
    },
  ]);
  return new Agent(config, (line) => logs.push(line), hooks);
}

beforeAll(async () => {
  if (!existsSync(path.join(CONSOLE_DIR, ".next/BUILD_ID"))) {
    throw new Error(
      "no console build (apps/console/.next/BUILD_ID): run `npx turbo run build --filter=@tide/console`",
    );
  }
  databaseUrl = inject("databaseUrl");
  db = createDb(databaseUrl, { max: 4 });
  const { truncateAll, makeUser, callerFor } = await loadApiFixtures();
  await truncateAll(db);
  const admin = await makeUser(db, "admin");
  const api = callerFor(db, admin);
  hostToken = (await api.hostTokens.create({ hostname: HOST })).token;
  restartToken = (await api.hostTokens.create({ hostname: HOST_RESTART })).token;
  apiToken = (await api.tokens.create({ name: "agent-it", scopes: [...admin.scopes] })).token;
  dir = mkdtempSync(path.join(tmpdir(), "tide-agent-it-"));
  port = await freePort();
  consoleUrl = `http://127.0.0.1:${port}`;
  server = await startConsole(port, databaseUrl);
});

afterAll(async () => {
  await stopConsole(server);
  await db?.$disconnect();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("agent <-> real console", () => {
  it("hello registers the host, batches arrive, an outage is buffered and replayed in order without gaps", async () => {
    let buffered = 0;
    let replayLength = 0;
    const logs: string[] = [];
    const delivered: { sampledAt: string[]; replayed: boolean; accepted: number }[] = [];
    const agent = agentFor(hostToken, logs, { onDelivered: (b) => delivered.push(b) });
    const count = () => delivered.reduce((n, b) => n + b.sampledAt.length, 0);
    await agent.start();
    try {
      // hello + live batches
      await until("3 delivered samples", () => count() >= 3);
      expect(agent.consoleLink?.connected).toBe(true);
      const hosts = await fetch(`${consoleUrl}/api/v1/hosts`, {
        headers: { authorization: `Bearer ${apiToken}` },
      });
      expect(hosts.status).toBe(200);
      const host = (
        (await hosts.json()) as { name: string; roles: string[]; lastSeenAt: string | null }[]
      ).find((h) => h.name === HOST);
      expect(host).toMatchObject({ name: HOST, roles: ["proxy"] });
      expect(host?.lastSeenAt).not.toBeNull();
      expect(delivered.every((b) => !b.replayed)).toBe(true);

      // outage: stop the console, keep sampling
      await stopConsole(server);
      server = undefined;
      const outageStart = Date.now();
      await until("the agent to notice the outage", () =>
        logs.some((l) => l.startsWith("console unreachable")),
      );
      await until("4 buffered samples", () => (agent.consoleLink?.buffer.size ?? 0) >= 4);
      buffered = agent.consoleLink!.buffer.size;
      expect(Date.now() - outageStart).toBeGreaterThan(2000);

      // back: the buffer drains oldest first with replayed: true
      server = await startConsole(port, databaseUrl);
      await until("a replayed batch", () => delivered.some((b) => b.replayed), 45_000);
      const replay = delivered.find((b) => b.replayed)!;
      replayLength = replay.sampledAt.length;
      expect(replayLength).toBeGreaterThanOrEqual(buffered);
      // Said once the flush that began with the replay ends: samples taken meanwhile go first.
      await until("the agent to say the console is back", () => logs.includes("console reachable again"));
      const after = count();
      await until("2 more live samples", () => count() >= after + 2);
    } finally {
      await agent.stop();
    }

    // everything the agent delivered is stored, in increasing time order, without a gap
    // (a batch whose reply was lost to the shutdown is sent again; the console ignores the duplicate)
    const sent = [...new Set(delivered.flatMap((b) => b.sampledAt))];
    for (let i = 1; i < sent.length; i++)
      expect(Date.parse(sent[i]!)).toBeGreaterThan(Date.parse(sent[i - 1]!));
    const stored = await storedSampleTimes(db, HOST);
    expect(stored).toEqual(sent);
    const gaps = stored.slice(1).map((t, i) => Date.parse(t) - Date.parse(stored[i]!));
    console.log(
      `[agent it] ${stored.length} samples stored, ${buffered}+ buffered during the outage, replayed batch of ${replayLength}, max gap ${Math.max(...gaps)} ms`,
    );
    expect(Math.max(...gaps)).toBeLessThan(2000); // 1 s interval: no sample lost across the outage
    expect(delivered.reduce((n, b) => n + b.accepted, 0)).toBe(stored.length);
    expect(logs.join("\n")).not.toContain(hostToken);
  }, 120_000);

  it("an agent restarted while the console is down replays its spool, and reports what it lost", async () => {
    const spoolDir = path.join(dir, "spool-restart");
    const down = `http://127.0.0.1:${await freePort()}`; // nothing listens there
    const firstLogs: string[] = [];
    const first = agentFor(
      restartToken,
      firstLogs,
      {},
      { hostname: HOST_RESTART, consoleUrl: down, spoolDir },
    );
    await first.start();
    let spooled: string[];
    try {
      await until(
        "4 samples buffered with the console down",
        () => (first.consoleLink?.buffer.size ?? 0) >= 4,
      );
      spooled = first.consoleLink!.buffer.peek(1000).map((o) => o.sampledAt);
    } finally {
      await first.stop();
    }
    const segments = readdirSync(spoolDir).filter((n) => n.endsWith(".jsonl"));
    expect(segments.length).toBeGreaterThan(0);
    // A crash tore the last line of the journal: it is skipped and reported as spool_damaged.
    appendFileSync(path.join(spoolDir, segments.sort().at(-1)!), '{"seq":999999999,"o":{"hostId"');

    const logs: string[] = [];
    const delivered: { sampledAt: string[]; replayed: boolean }[] = [];
    const second = agentFor(
      restartToken,
      logs,
      { onDelivered: (b) => delivered.push(b) },
      {
        hostname: HOST_RESTART,
        spoolDir,
      },
    );
    await second.start();
    try {
      expect(logs.some((l) => /undelivered samples from an earlier run to replay; 1 damaged/.test(l))).toBe(
        true,
      );
      await until("the spooled samples delivered", () =>
        spooled.every((t) => delivered.some((b) => b.sampledAt.includes(t))),
      );
      expect(delivered[0]!.replayed).toBe(true);
      expect(delivered[0]!.sampledAt.slice(0, spooled.length)).toEqual(spooled);
    } finally {
      await second.stop();
    }
    const stored = new Set(await storedSampleTimes(db, HOST_RESTART));
    expect(spooled.filter((t) => !stored.has(t))).toEqual([]);
    const res = await fetch(`${consoleUrl}/api/v1/hosts/${HOST_RESTART}`, {
      headers: { authorization: `Bearer ${apiToken}` },
    });
    expect(res.status).toBe(200);
    const host = (await res.json()) as { samplesDropped: Record<string, number> | null };
    expect(host.samplesDropped).toEqual({
      buffer_full: 0,
      refused: 0,
      in_future: 0,
      too_old: 0,
      spool_damaged: 1,
    });
    // Everything delivered: the journal's segments are gone, its state remembers the drop.
    expect(readdirSync(spoolDir).filter((n) => n.endsWith(".jsonl"))).toEqual([]);
    expect(JSON.parse(readFileSync(path.join(spoolDir, "state.json"), "utf8"))).toMatchObject({
      dropped: { spool_damaged: 1 },
    });
  }, 90_000);

  it("a wrong token gets 401, reported without the token", async () => {
    const wrong = `tide_host_${randomBytes(24).toString("base64url")}`;
    const logs: string[] = [];
    const agent = agentFor(wrong, logs);
    await agent.start();
    try {
      await until("a 401 report", () => logs.some((l) => l.startsWith("console rejected the host token")));
    } finally {
      await agent.stop();
    }
    expect(agent.consoleLink?.connected).toBe(false);
    expect(agent.consoleLink?.lastError).toMatch(/POST \/api\/v1\/agent\/hello: HTTP 401/);
    const all = logs.join("\n") + (agent.consoleLink?.lastError ?? "");
    expect(all).not.toContain(wrong);
    expect(all).not.toContain(wrong.slice("tide_host_".length));
    expect(logs.find((l) => l.startsWith("console rejected"))).toMatch(/HTTP 401/);
  });
});
