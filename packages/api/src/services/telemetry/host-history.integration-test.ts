import { newId, type NamespaceObservation, type Observation } from "@tide/contracts";
import { createDb, storeBatch, type Db, type Prisma } from "@tide/db";
import { CONTAINER, namespace, ROOT, sample, WEB } from "@tide/diagnostics/fixtures";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { createHostToken } from "../../auth/host-tokens.service";
import { openApiDocument } from "../../openapi";
import type { HostHistory } from "../../schemas/history.schema";
import { callerFor, makeUser, restCall, truncateAll } from "../../testing/fixtures";
import { hostHistory } from "./host-history.service";
import { TelemetryCompactor } from "./telemetry-compactor";

let db: Db;

beforeAll(() => {
  db = createDb(inject("databaseUrl"), { max: 4 });
});
afterAll(async () => {
  await db.$disconnect();
});
beforeEach(async () => {
  await truncateAll(db);
});

const HOSTNAME = "lb-hist-01";
/** Two hours before the wall clock, on the hour: the REST calls (real clock) find it in the rollups. */
const T0 = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 2 * 3_600_000;
/** Sample t is at T0 + t s and a few ms of jitter, as agents send them. */
const atMs = (t: number) => T0 + t * 1000 + (t % 4);
const SECONDS = 2_400;
/** Not stored: all of minute 10, and five seconds in minute 33. */
const missing = (t: number) => (t >= 600 && t < 660) || (t >= 2_000 && t < 2_005);
const TIMES = Array.from({ length: SECONDS }, (_, t) => t).filter((t) => !missing(t));
const RETENTION_MIN = 60;
/** The console's clock in the tests that set it: 5 s after the last sample. */
const NOW = T0 + (SECONDS + 5) * 1000;
const CLOCK = { now: NOW, retentionMinutes: RETENTION_MIN, rollupDays: 30 };

/** Drops rise unevenly and reset at t = 1,830; overflows rise 3/s; web collapses 7/s; no frag fails. */
function countersAt(t: number) {
  return {
    root: {
      TcpExtListenDrops: t < 1_830 ? 1_051 + 10 * t + (t % 7) * (t % 3) : 2 * (t - 1_830),
      TcpExtListenOverflows: 1_043 + 3 * t,
      IpFragFails: 0,
    },
    web: { TcpExtTCPRcvCollapsed: 7 * t },
  };
}

function observation(t: number): Observation {
  const c = countersAt(t);
  const namespaces: NamespaceObservation[] = [
    namespace(t, { counters: c.root }),
    namespace(t, { netns: WEB, counters: c.web }),
    // Idle: no counter moves, no socket (charted with zero rates in every tier, not left out)
    { ...namespace(t, { netns: CONTAINER, listeners: [] }), sockstat: null },
  ];
  return { ...sample(t, { hostId: HOSTNAME, namespaces }), sampledAt: new Date(atMs(t)).toISOString() };
}

/** Store the samples through ingest's statement (batches of 400), then compact as the console does. */
async function seedHost(): Promise<string> {
  const id = newId("host");
  await db.host.create({ data: { id, name: HOSTNAME, roles: ["proxy"] } });
  for (let i = 0; i < TIMES.length; i += 400) {
    const rows = TIMES.slice(i, i + 400).map((t) => ({
      id: newId("observation"),
      sampledAt: new Date(atMs(t)),
      payload: observation(t) as unknown as Prisma.InputJsonValue,
    }));
    const stored = await storeBatch(
      db,
      id,
      rows,
      RETENTION_MIN * 60_000,
      { dataPlane: [], agentVersion: "0.1.0", kernelRelease: null },
      { now: new Date(T0 + SECONDS * 1000), maxFutureMs: 60_000 },
    );
    expect(stored.accepted).toBe(rows.length);
  }
  // Minutes complete before NOW - 180 s (0..36) go to chunks and rollups; 37..39 stay raw.
  const run = await new TelemetryCompactor(db, {
    retentionMinutes: RETENTION_MIN,
    hotWindowS: 180,
    log: () => {},
  }).runOnce(new Date(NOW));
  expect(run.minutes).toBe(36); // 37 minutes, minute 10 never stored
  expect(await db.observationSample.count({ where: { hostId: id } })).toBe(180);
  return id;
}

/** The idle namespace's key (unnamed, not the root). */
const IDLE = `inode:${CONTAINER.inode}`;

const series = (h: HostHistory, ns: string, counter: string) => {
  const s = h.namespaces.find((n) => n.key === ns)?.series.find((x) => x.counter === counter);
  if (!s) throw new Error(`no ${ns} ${counter} in the history`);
  return s;
};
type Counter = "TcpExtListenDrops" | "TcpExtListenOverflows" | "IpFragFails" | "TcpExtTCPRcvCollapsed";
const valueOf = (t: number, counter: Counter) => {
  const c = countersAt(t);
  return counter === "TcpExtTCPRcvCollapsed" ? c.web[counter] : c.root[counter];
};

describe("host history", () => {
  it("serves 15 min from the 1 s samples: each second's rate since the previous stored sample", async () => {
    await seedHost();
    const h = await hostHistory(db, { hostId: HOSTNAME, range: "15m" }, CLOCK);
    expect(h).toMatchObject({ tier: "samples", resolutionS: 1, stepS: 1, label: "1 s samples", points: 901 });
    const first = SECONDS + 5 - 900; // t of bucket 0
    expect(h.start).toBe(new Date(T0 + first * 1000).toISOString());
    expect(h.sourcePoints).toBe(TIMES.filter((t) => t >= first).length);
    expect(h.namespaces.map((n) => n.key)).toEqual(["root", IDLE, "name:web"]);
    for (const [ns, counter] of [
      ["root", "TcpExtListenDrops"],
      ["root", "TcpExtListenOverflows"],
      ["root", "IpFragFails"],
      ["name:web", "TcpExtTCPRcvCollapsed"],
    ] as const) {
      // Computed here from the counters themselves: a missing second is null, a reset is null, the
      // second after a hole has the rate over the hole.
      const expected = Array.from({ length: 901 }, (_, i) => {
        const t = first + i;
        if (t >= SECONDS || missing(t)) return null;
        let p = t - 1;
        while (missing(p)) p--;
        const d = valueOf(t, counter) - valueOf(p, counter);
        return d < 0 ? null : d / ((atMs(t) - atMs(p)) / 1000);
      });
      const s = series(h, ns, counter);
      expect(s.avg, `${ns} ${counter}`).toEqual(expected);
      expect(s.min).toEqual(expected);
      expect(s.max).toEqual(expected);
    }
    // The holes are where the test put them.
    const drops = series(h, "root", "TcpExtListenDrops").avg;
    expect(drops[1_830 - first]).toBeNull();
    expect(drops.slice(2_000 - first, 2_005 - first)).toEqual([null, null, null, null, null]);
    expect(drops[2_005 - first]).toBeCloseTo(
      (valueOf(2_005, "TcpExtListenDrops") - valueOf(1_999, "TcpExtListenDrops")) / 6,
      1,
    );
  });

  it("serves 24 h from the one-minute rollups: min/max/avg/last of each minute as the raw data gives", async () => {
    await seedHost();
    const h = await hostHistory(db, { hostId: HOSTNAME, range: "24h" }, CLOCK);
    expect(h).toMatchObject({ tier: "rollups", resolutionS: 60, stepS: 60, label: "1 min rollups" });
    expect(h.points).toBe(1_441);
    const start = Date.parse(h.start);
    const bucketOfMinute = (m: number) => (T0 + m * 60_000 - start) / 60_000;
    // Minutes 0..39 but 10: 36 from the compactor, 37..39 rolled up from the raw rows on the fly.
    expect(h.sourcePoints).toBe(39);
    // The idle namespace is listed as in the 15 min view, at zero wherever a minute was stored.
    expect(h.namespaces.map((n) => n.key)).toEqual(["root", IDLE, "name:web"]);
    const idle = series(h, IDLE, "TcpExtListenDrops").avg;
    expect(Array.from({ length: 40 }, (_, m) => idle[bucketOfMinute(m)])).toEqual(
      Array.from({ length: 40 }, (_, m) => (m === 10 ? null : 0)),
    );
    const round = (x: number) => (x === 0 ? 0 : Number(x.toPrecision(4)));
    for (const [ns, counter] of [
      ["root", "TcpExtListenDrops"],
      ["root", "TcpExtListenOverflows"],
      ["root", "IpFragFails"],
      ["name:web", "TcpExtTCPRcvCollapsed"],
    ] as const) {
      const s = series(h, ns, counter);
      const expected = {
        min: [] as (number | null)[],
        avg: [] as (number | null)[],
        max: [] as (number | null)[],
      };
      for (let m = 0; m < 40; m++) {
        const ts = TIMES.filter((t) => t >= m * 60 && t < m * 60 + 60);
        if (ts.length === 0) {
          expected.min.push(null);
          expected.avg.push(null);
          expected.max.push(null);
          continue;
        }
        // Pairs within the minute; a decrease is a reset whose increase is the new value.
        const rates: number[] = [];
        let inc = 0;
        let secs = 0;
        for (let i = 1; i < ts.length; i++) {
          const [p, c] = [ts[i - 1]!, ts[i]!];
          const d =
            valueOf(c, counter) >= valueOf(p, counter)
              ? valueOf(c, counter) - valueOf(p, counter)
              : valueOf(c, counter);
          const dt = (atMs(c) - atMs(p)) / 1000;
          rates.push(d / dt);
          inc += d;
          secs += dt;
        }
        expected.min.push(round(Math.min(...rates)));
        expected.max.push(round(Math.max(...rates)));
        expected.avg.push(round(inc / secs));
      }
      const got = (a: (number | null)[]) => Array.from({ length: 40 }, (_, m) => a[bucketOfMinute(m)]);
      expect(got(s.min), `${ns} ${counter} min`).toEqual(expected.min);
      expect(got(s.max), `${ns} ${counter} max`).toEqual(expected.max);
      expect(got(s.avg), `${ns} ${counter} avg`).toEqual(expected.avg);
      // Nothing before the host's first minute or after its last: gaps, not zeros.
      expect(s.avg.slice(0, bucketOfMinute(0)).every((v) => v === null)).toBe(true);
      expect(s.avg.slice(bucketOfMinute(40)).every((v) => v === null)).toBe(true);
    }
    // Two hours on, the compactor has packed the hour into one row and pruned the 1 s tier: the
    // same minutes read the same from the packed row.
    const later = T0 + 2 * 3_600_000 + 120_000;
    const compactor = new TelemetryCompactor(db, {
      retentionMinutes: RETENTION_MIN,
      hotWindowS: 180,
      log: () => {},
    });
    // (As every 15 s in a console: the last minutes rolled up before they leave the retention.)
    expect((await compactor.runOnce(new Date(NOW + 600_000))).minutes).toBe(3);
    const packing = await compactor.runOnce(new Date(later));
    expect(packing.packedMinutes).toBe(39);
    expect(await db.observationRollup.count()).toBe(1);
    const packed = await hostHistory(db, { hostId: HOSTNAME, range: "24h" }, { ...CLOCK, now: later });
    expect(packed.sourcePoints).toBe(39);
    const startLater = Date.parse(packed.start);
    // With no sample left the namespaces are named by inode (the names came from the newest sample).
    expect(packed.namespaces.map((n) => n.key)).toEqual([
      `inode:${ROOT.inode}`,
      `inode:${WEB.inode}`,
      `inode:${CONTAINER.inode}`,
    ]);
    const minutesOf = (hh: HostHistory, s0: number, ns: string, c: string) => {
      const inode = ns === "root" ? ROOT.inode : WEB.inode;
      const x = hh.namespaces.find((n) => n.netns.inode === inode)!.series.find((y) => y.counter === c)!;
      const at = (m: number) => (T0 + m * 60_000 - s0) / 60_000;
      return ["min", "avg", "max", "last"].map((k) =>
        Array.from({ length: 41 }, (_, m) => x[k as "min"][at(m)]),
      );
    };
    for (const [ns, c] of [
      ["root", "TcpExtListenDrops"],
      ["name:web", "TcpExtTCPRcvCollapsed"],
    ] as const) {
      expect(minutesOf(packed, startLater, ns, c), `${ns} ${c} packed`).toEqual(minutesOf(h, start, ns, c));
    }
    // The reset minute (30) shows the reset's new value as an increase, so its max is that of the
    // steady rate: 10 + up to 12 from (t % 7) * (t % 3) per second.
    expect(series(h, "root", "TcpExtListenDrops").max[bucketOfMinute(30)]).toBeGreaterThan(2);
  });

  it("buckets a week into 10 min and serves REST to read tokens with the same series", async () => {
    await seedHost();
    const admin = await makeUser(db, "admin");
    const { token } = await callerFor(db, admin).tokens.create({ name: "runbook", scopes: ["read"] });
    const week = await restCall(db, "GET", `/hosts/${HOSTNAME}/history?range=7d`, { token });
    expect(week.status).toBe(200);
    const w = week.body as unknown as HostHistory;
    expect(w).toMatchObject({
      tier: "rollups",
      stepS: 600,
      label: "1 min rollups, 10 min buckets",
      range: "7d",
    });
    expect(w.points).toBeLessThanOrEqual(1_010);
    // The seeded 40 minutes fill 4 or 5 ten-minute buckets (minute 10 alone never makes a bucket empty).
    const filled = series(w, "root", "TcpExtListenOverflows").avg.filter((v) => v !== null);
    expect(filled.length).toBeGreaterThanOrEqual(4);
    expect(filled.length).toBeLessThanOrEqual(5);
    for (const v of filled) expect(v).toBeCloseTo(3, 2);

    const from = new Date(T0).toISOString();
    const to = new Date(T0 + 40 * 60_000).toISOString();
    const custom = await restCall(db, "GET", `/hosts/${HOSTNAME}/history?from=${from}&to=${to}`, { token });
    expect(custom.status).toBe(200);
    const direct = await hostHistory(db, { hostId: HOSTNAME, from, to });
    expect(custom.body).toEqual(JSON.parse(JSON.stringify(direct)));
    expect(direct).toMatchObject({ tier: "rollups", range: null, points: 41 });
  });

  it("refuses bad input with a plain 4xx, changing nothing; needs the read scope", async () => {
    const hostId = await seedHost();
    const admin = await makeUser(db, "admin");
    const api = callerFor(db, admin).tokens;
    const { token: read } = await api.create({ name: "runbook", scopes: ["read"] });
    const { token: operate } = await api.create({ name: "drainer", scopes: ["operate"] });
    const { token: hostToken } = await createHostToken(db, admin, { hostname: HOSTNAME });
    const counts = () =>
      Promise.all([
        db.observationSample.count(),
        db.observationChunk.count(),
        db.observationRollup.count(),
        db.auditEvent.count(),
        db.host.findUnique({ where: { id: hostId } }),
      ]);
    const before = await counts();
    const get = async (query: string, token: string | null = read, host = HOSTNAME) => {
      const r = await restCall(db, "GET", `/hosts/${host}/history?${query}`, token ? { token } : {});
      return { status: r.status, message: r.body?.message };
    };
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(await get(`from=${iso(now - 60_000)}&to=${iso(now - 60_000)}`)).toEqual({
      status: 400,
      message: "from must be before to.",
    });
    expect(await get(`from=${iso(now)}&to=${iso(now - 3_600_000)}`)).toEqual({
      status: 400,
      message: "from must be before to.",
    });
    expect(await get(`from=yesterday&to=${iso(now)}`)).toEqual({
      status: 400,
      message: 'from "yesterday" is not an ISO 8601 time (e.g. 2026-11-27T03:00:00Z).',
    });
    expect(await get(`from=${iso(now - 40 * 86_400_000)}&to=${iso(now)}`)).toEqual({
      status: 400,
      message: "The range is longer than the 30 days of history kept.",
    });
    expect(await get("range=1y")).toEqual({
      status: 400,
      message: 'range "1y" is not one of 15m, 1h, 24h, 7d.',
    });
    expect(await get("")).toEqual({
      status: 400,
      message: "Give range (15m, 1h, 24h, 7d) or both from and to.",
    });
    expect(await get("range=1h", read, "nope-01")).toEqual({
      status: 404,
      message: "Host nope-01 does not exist.",
    });
    expect((await get("range=1h", null)).status).toBe(401);
    expect((await get("range=1h", operate)).status).toBe(403);
    expect((await get("range=1h", hostToken)).status).toBe(403);
    expect((await get("range=1h", read)).status).toBe(200);
    expect(await counts()).toEqual(before);
  });

  it("is in the OpenAPI document with its query parameters", () => {
    const op = openApiDocument().paths?.["/hosts/{hostId}/history"]?.get;
    expect(op?.tags).toEqual(["hosts"]);
    const names = (op?.parameters ?? []).map((p) => ("name" in p ? p.name : ""));
    expect(names).toEqual(expect.arrayContaining(["hostId", "range", "from", "to"]));
  });
});
