import { testHello } from "@tide/contracts/testing";
import { sample } from "@tide/diagnostics/fixtures";
import { createDb, type Db } from "@tide/db";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { callerFor, makeUser, truncateAll } from "../testing/fixtures";
import { IngestAdmission } from "./ingest-admission";
import { handleRestRequest } from "./routes";

/**
 * Issue 27 item 7: agents replaying a backlog after an outage send batches of up to 4 MiB, and
 * the admission counted batches, not bytes: 16 such batches at once each outlasted the agents'
 * 10 s limit (82 of 204 POSTs of 20 replaying agents timed out). Admitted by bytes in flight, the
 * console takes what it can finish and answers the rest 503 busy with Retry-After before reading
 * them; the agents resend, and every sample is stored once.
 */

const AGENTS = 12;
const SAMPLES = 300; // per batch: ~1.5 MiB of JSON
const BUDGET = 4 * 1024 * 1024;
let db: Db;
const tokens = new Map<string, string>();

beforeAll(async () => {
  db = createDb(inject("databaseUrl"));
  await truncateAll(db);
  const api = callerFor(db, await makeUser(db, "admin"));
  for (let i = 0; i < AGENTS; i++) {
    const hostname = `lb-replay-${i}`;
    tokens.set(hostname, (await api.hostTokens.create({ hostname })).token);
  }
});
afterAll(async () => {
  await db.$disconnect();
});

/** An admission that remembers the most body bytes it ever had in flight. */
class MeasuredAdmission extends IngestAdmission {
  peakBytes = 0;
  peakBatches = 0;
  override enter(bytes = 0) {
    const refusal = super.enter(bytes);
    this.peakBytes = Math.max(this.peakBytes, this.activeBytes);
    this.peakBatches = Math.max(this.peakBatches, this.active);
    return refusal;
  }
}

function post(path: string, token: string, body: string): Request {
  return new Request(`http://localhost${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(body)),
    },
    body,
  });
}

/** SAMPLES samples of the last minutes, one a second, replayed: true, as an agent's backlog batch. */
function backlog(hostname: string, endMs: number): string {
  const observations = Array.from({ length: SAMPLES }, (_, i) => ({
    ...sample(i, { hostId: hostname }),
    sampledAt: new Date(endMs - (SAMPLES - i) * 1000).toISOString(),
  }));
  return JSON.stringify({ observations, dataPlane: [], replayed: true });
}

describe("agents replaying large batches at once", () => {
  it("are admitted by bytes in flight; the others are told 503 busy with Retry-After; all is stored once", async () => {
    const admission = new MeasuredAdmission(16, BUDGET);
    const end = Math.floor(Date.now() / 1000) * 1000 - 1000;
    const bodies = new Map([...tokens.keys()].map((h) => [h, backlog(h, end)]));
    const batchBytes = Buffer.byteLength(bodies.values().next().value!);
    for (const [hostname, token] of tokens) {
      const hello = await handleRestRequest(
        post("/api/v1/agent/hello", token, JSON.stringify(testHello(hostname))),
        {
          db,
        },
      );
      expect(hello.status).toBe(200);
    }

    const statuses: Record<string, number> = {};
    const admittedMs: number[] = [];
    let refusedWithoutRetryAfter = 0;
    const refusedSamples: Record<string, number> = {};
    // Every agent sends its batch at once and resends after a refusal, as console-link.ts does.
    await Promise.all(
      [...tokens].map(async ([hostname, token]) => {
        for (let attempt = 0; attempt < 200; attempt++) {
          const t = performance.now();
          const res = await handleRestRequest(
            post("/api/v1/agent/observations", token, bodies.get(hostname)!),
            {
              db,
              admission,
            },
          );
          const text = await res.text();
          if (res.status === 200) {
            const refused = (JSON.parse(text) as { refused?: { reason: string }[] }).refused ?? [];
            for (const r of refused) refusedSamples[r.reason] = (refusedSamples[r.reason] ?? 0) + 1;
          }
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          if (res.status === 200) {
            admittedMs.push(performance.now() - t);
            return;
          }
          if (res.status !== 503 || !res.headers.get("retry-after")) refusedWithoutRetryAfter++;
          await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
        }
      }),
    );
    admittedMs.sort((a, b) => a - b);
    console.log(
      `${AGENTS} agents, ${(batchBytes / 1024 / 1024).toFixed(2)} MiB batches, budget ${BUDGET / 1024 / 1024} MiB: ` +
        `answers ${JSON.stringify(statuses)}; at most ${admission.peakBatches} batches / ` +
        `${(admission.peakBytes / 1024 / 1024).toFixed(2)} MiB in flight; admitted batch answered in ` +
        `p50 ${admittedMs[Math.floor(admittedMs.length / 2)]!.toFixed(0)} ms, max ${admittedMs.at(-1)!.toFixed(0)} ms; ` +
        `samples refused: ${JSON.stringify(refusedSamples)}`,
    );

    expect(statuses["200"]).toBe(AGENTS);
    expect(Object.keys(statuses).sort()).toEqual(["200", "503"]);
    expect(refusedWithoutRetryAfter).toBe(0);
    // The budget held: never more bytes in flight than it, and never fewer than one batch.
    expect(admission.peakBytes).toBeLessThanOrEqual(BUDGET);
    expect(admission.peakBatches).toBeLessThanOrEqual(Math.max(1, Math.floor(BUDGET / batchBytes)));
    expect(admission.peakBatches).toBeGreaterThanOrEqual(1);
    expect(admission.active).toBe(0);
    expect(admission.activeBytes).toBe(0);
    // Stored once each: raw, or already compacted into its minute's chunk (older than a few minutes).
    const [stored] = await db.$queryRaw<{ n: number }[]>`
      SELECT (SELECT count(*) FROM observation_samples)::int
           + (SELECT coalesce(sum(cardinality(offsets_ms)), 0) FROM observation_chunks)::int AS n`;
    expect(stored?.n).toBe(AGENTS * SAMPLES);
  }, 180_000);

  it("admits one batch larger than the whole budget when nothing else is in flight", () => {
    const admission = new IngestAdmission(16, 1024);
    expect(admission.enter(4096)).toBeNull();
    expect(admission.enter(1)?.code).toBe("busy");
    admission.leave(4096);
    expect(admission.enter(1)).toBeNull();
  });
});
