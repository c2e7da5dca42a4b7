import { createDb, type Db } from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { callerFor, makeUser, restCall, truncateAll } from "../../testing/fixtures";

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

const rest = (method: string, path: string, token: string, body?: unknown) =>
  restCall(db, method, path, { token, body });

async function setup() {
  const admin = await makeUser(db, "admin");
  const api = callerFor(db, admin);
  const make = async (scopes: ("read" | "operate" | "admin")[]) =>
    (await api.tokens.create({ name: scopes.join("+"), scopes })).token;
  const host = await api.hostTokens.create({ hostname: "lb-fra-03" });
  return { read: await make(["read"]), operate: await make(["read", "operate"]), hostToken: host.token };
}

describe("PMTU targets set in the console reach the agent's desired state", () => {
  it("operators set them over REST; the agent's desired state carries them under a new revision; audited", async () => {
    const t = await setup();
    const before = await rest("GET", "/agent/desired", t.hostToken);
    expect(before.status).toBe(200);
    expect(before.body!.pmtuTargets).toEqual([]);

    const targets = [
      { target: "10.30.0.2", sizes: [1472, 1200, 1472] },
      { target: "edge-gw.example.net", sizes: [] },
    ];
    const set = await rest("PUT", "/hosts/lb-fra-03/pmtu-targets", t.operate, {
      targets,
      reason: "INC-4411",
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body!.pmtuTargets).toEqual([
      { target: "10.30.0.2", sizes: [1200, 1472] },
      { target: "edge-gw.example.net", sizes: [] },
    ]);

    const after = await rest("GET", "/agent/desired", t.hostToken);
    expect(after.body!.revision).toBe(set.body!.desiredRevision);
    expect(after.body!.revision as number).toBeGreaterThan(before.body!.revision as number);
    expect(after.body!.pmtuTargets).toEqual(set.body!.pmtuTargets);

    const host = await rest("GET", "/hosts/lb-fra-03", t.read);
    expect(host.body!.pmtuTargets).toEqual(set.body!.pmtuTargets);

    const audit = await db.auditEvent.findMany({ where: { action: "host.pmtu_targets" } });
    expect(audit).toHaveLength(1);
    expect(audit[0]!.reason).toBe("INC-4411");
    expect(audit[0]!.before).toEqual({ pmtuTargets: [] });
  });

  it("refuses read-only tokens and bad lists with 4xx, and changes nothing", async () => {
    const t = await setup();
    const ok = [{ target: "10.30.0.2", sizes: [1472] }];
    expect((await rest("PUT", "/hosts/lb-fra-03/pmtu-targets", t.operate, { targets: ok })).status).toBe(200);
    const revision = (await rest("GET", "/agent/desired", t.hostToken)).body!.revision;

    const refused = [
      { token: t.read, body: { targets: [] }, status: 403 },
      // An option smuggled as a target would reach tracepath's argv.
      { token: t.operate, body: { targets: [{ target: "-n", sizes: [] }] }, status: 400 },
      { token: t.operate, body: { targets: [{ target: "10.0.0.1; reboot", sizes: [] }] }, status: 400 },
      { token: t.operate, body: { targets: [{ target: "10.0.0.1", sizes: [20] }] }, status: 400 },
      { token: t.operate, body: { targets: [{ target: "a" }, { target: "a" }] }, status: 400 },
      {
        token: t.operate,
        body: { targets: Array.from({ length: 33 }, (_, i) => ({ target: `h${i}` })) },
        status: 400,
      },
      { token: t.hostToken, body: { targets: [] }, status: 403 },
    ];
    for (const r of refused) {
      const res = await rest("PUT", "/hosts/lb-fra-03/pmtu-targets", r.token, r.body);
      expect(res.status, JSON.stringify(r.body)).toBe(r.status);
      expect(typeof (res.body as { message?: unknown }).message).toBe("string");
    }
    expect((await rest("PUT", "/hosts/nope-01/pmtu-targets", t.operate, { targets: [] })).status).toBe(404);

    const desired = await rest("GET", "/agent/desired", t.hostToken);
    expect(desired.body!.revision).toBe(revision);
    expect(desired.body!.pmtuTargets).toEqual(ok);
    expect(await db.auditEvent.count({ where: { action: "host.pmtu_targets", outcome: "done" } })).toBe(1);
  });
});
