/**
 * The version handshake on hello: an agent within one minor version of the console works; one
 * further apart is refused with the plain reason (409, details.reason "version_skew"), and its
 * version is still recorded so its host page can say why it is not reporting.
 */
import type { AgentHello } from "@tide/contracts";
import { createDb, type Db } from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { callerFor, makeUser, restCall, truncateAll } from "../../testing/fixtures";
import { TIDE_VERSION } from "../../version";
import { agentHello } from "./agent.service";

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

const HOST = "lb-ams-07";

function hello(agentVersion: string): AgentHello {
  return {
    protocolVersion: 1,
    agentVersion,
    hostname: HOST,
    kernelRelease: "6.12.48-tide",
    roles: ["proxy"],
    probes: [],
    dataPlane: [],
  };
}

async function hostToken(): Promise<{ token: string; hostId: string }> {
  const admin = await makeUser(db, "admin");
  const created = await callerFor(db, admin).hostTokens.create({ hostname: HOST });
  return { token: created.token, hostId: created.summary.hostId };
}

describe("agent hello: version skew", () => {
  it("accepts this console's own version over REST", async () => {
    const { token } = await hostToken();
    const res = await restCall(db, "POST", "/agent/hello", { token, body: hello(TIDE_VERSION) });
    expect(res.status).toBe(200);
  });

  it("accepts one minor version either way and refuses two, recording the version it refused", async () => {
    const { hostId } = await hostToken();
    const caller = { hostId, hostname: HOST, tokenId: "htk_test", label: `host ${HOST}` };
    await expect(agentHello(db, caller, hello("0.4.2"), "0.5.0")).resolves.toMatchObject({ hostId: HOST });
    await expect(agentHello(db, caller, hello("0.6.0"), "0.5.0")).resolves.toMatchObject({ hostId: HOST });
    const refused = agentHello(db, caller, hello("0.3.9"), "0.5.0");
    await expect(refused).rejects.toMatchObject({
      code: "conflict",
      details: { reason: "version_skew", consoleVersion: "0.5.0", agentVersion: "0.3.9" },
    });
    await expect(refused).rejects.toThrow(/0\.3\.9 is 2 minor versions older .* Upgrade the agent\./);
    const row = await db.host.findUniqueOrThrow({ where: { id: hostId }, select: { agentVersion: true } });
    expect(row.agentVersion).toBe("0.3.9");
  });

  it("lists a host whose agent is too far away with the reason, and one within reach without", async () => {
    const { token } = await hostToken();
    const admin = callerFor(db, await makeUser(db, "operator"));
    const [major, minor] = TIDE_VERSION.split(".").map(Number) as [number, number];
    await restCall(db, "POST", "/agent/hello", { token, body: hello(`${major}.${minor + 1}.0`) });
    expect((await admin.hosts.list()).find((h) => h.name === HOST)?.versionSkew).toBeNull();
    await restCall(db, "POST", "/agent/hello", { token, body: hello(`${major}.${minor + 2}.0`) });
    const listed = (await admin.hosts.list()).find((h) => h.name === HOST);
    expect(listed?.agentVersion).toBe(`${major}.${minor + 2}.0`);
    expect(listed?.versionSkew).toMatch(/2 minor versions newer .* Upgrade the console\./);
  });

  it("answers a refused hello with 409 and the reason over REST", async () => {
    const { token } = await hostToken();
    const res = await restCall(db, "POST", "/agent/hello", { token, body: hello("99.0.0") });
    expect(res.status).toBe(409);
    expect(String(res.body?.message)).toMatch(/another major version .* Upgrade the console\./);
  });
});
