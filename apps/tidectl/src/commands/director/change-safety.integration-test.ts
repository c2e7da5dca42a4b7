/**
 * tidectl's changes that can break connections (issue 26 item 1) against the real REST handler and
 * the integration tier's PostgreSQL: `pool binds` and `director unassign` print the API's refusal
 * (exit 1) when the proxies report connections the change would break, `--preview` says so first,
 * and `--reason` applies it. The proxy hosts' reports are written as ingest stores them.
 */
import { newId } from "@tide/contracts";
import type { Prisma } from "@tide/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTidectlHarness, type TidectlHarness } from "../../testing/api-harness";

let h: TidectlHarness;
/** Names and addresses unique to this run, so the test owns its data. */
const tag = newId("pool").slice(-6);
const poolName = `safe-${tag}`;
const directorName = `director-safe-${tag}.test`;
const net = `198.18.${parseInt(tag.slice(-2), 36) % 250}`;
const VIP = `${net}.10`;

const tidectl = (...argv: string[]) => h.tidectl(...argv);

/** A proxy host's fresh reading: `count` ESTABLISHED sockets on VIP:port (hosts.traffic). */
async function report(hostname: string, port: number, count: number): Promise<void> {
  const at = new Date().toISOString();
  const traffic = {
    at,
    readAt: at,
    expectedIntervalMs: 60_000,
    intervalS: null,
    lateReason: null,
    counters: null,
    rates: { newConnections: null, forwardedToAlternate: null, acceptedEstablished: null },
    established: [{ address: VIP, port, count }],
    history: [[at, count]],
  } as unknown as Prisma.InputJsonValue;
  await h.db.host.upsert({
    where: { name: hostname },
    create: { id: newId("host"), name: hostname, roles: ["proxy"], traffic },
    update: { traffic },
  });
}

beforeAll(async () => {
  h = await startTidectlHarness(`safe-${tag}`);
});
afterAll(async () => {
  await h.close();
});

describe("tidectl: changes that break connections", () => {
  it("binds and unassign: preview, refusal printed (exit 1), applied with --reason", async () => {
    const ok = async (...argv: string[]) => {
      const r = await tidectl(...argv);
      expect(r.err).toBe("");
      expect(r.code).toBe(0);
      return r.out;
    };
    await ok("pool", "create", poolName, "--bind", `tcp ${VIP}:443`, "--bind", `tcp ${VIP}:8081`);
    await ok("proxy", "add", poolName, `${net}.21`, `${poolName}-p1`);
    await ok("director", "register", directorName);
    await ok("director", "assign", directorName, poolName);
    await report(`${poolName}-p1`, 8081, 7);

    const preview = await ok("pool", "binds", poolName, "--bind", `tcp ${VIP}:443`, "--preview");
    expect(preview).toContain(`7 established connections (7 on ${poolName}-p1) to ${VIP}:8081 break`);
    const refused = await tidectl("pool", "binds", poolName, "--bind", `tcp ${VIP}:443`);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(
      `This change would break 7 established connections (7 on ${poolName}-p1) to ${VIP}:8081`,
    );
    expect(refused.err).toContain("(HTTP 422, unprocessable)");
    await ok("pool", "binds", poolName, "--bind", `tcp ${VIP}:443`, "--reason", "8081 retired");

    await report(`${poolName}-p1`, 443, 5);
    expect(await ok("director", "unassign", directorName, poolName, "--preview")).toContain(
      `${directorName} is the last director of ${poolName}`,
    );
    const last = await tidectl("director", "unassign", directorName, poolName);
    expect(last.code).toBe(1);
    expect(last.err).toContain(`Unassigning ${directorName} would break 5 established connections`);
    expect(last.err).toContain(`Assign another director to ${poolName} first`);
    const removal = await tidectl("director", "remove", directorName);
    expect(removal.code).toBe(1);
    expect(removal.err).toContain(`Removing ${directorName} would break 5 established connections`);
    expect(await ok("director", "unassign", directorName, poolName, "--reason", "site closes")).toContain(
      `${directorName} (`,
    );
    expect(await ok("director", "remove", directorName, "--preview")).toBe(
      `${directorName} serves no pool: nothing breaks.\n`,
    );
    await ok("director", "remove", directorName, "--reason", "decommissioned");
    const audit = await h.db.auditEvent.findMany({
      where: { action: { in: ["pool.binds", "director.unassign_pool", "director.remove"] }, outcome: "done" },
      select: { action: true, reason: true },
      orderBy: { createdAt: "asc" },
    });
    expect(audit.slice(-3)).toEqual([
      { action: "pool.binds", reason: "8081 retired" },
      { action: "director.unassign_pool", reason: "site closes" },
      { action: "director.remove", reason: "decommissioned" },
    ]);
    await ok("pool", "delete", poolName);
  });
});
