/**
 * tidectl's API commands against the real REST handler (trpc-to-openapi over the app router, the
 * same as the console's /api/v1 route) and the integration tier's throwaway PostgreSQL. The fetch
 * given to tidectl hands each request to the handler in-process; no server, no port.
 */
import { newId } from "@tide/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./cli";
import { startTidectlHarness, type TidectlHarness } from "./testing/api-harness";

let h: TidectlHarness;
/** Names unique to this run, so the test owns its data whatever else the database holds. */
const tag = newId("pool").slice(-6);
const poolName = `cli-${tag}`;
const directorName = `director-${tag}.test`;

beforeAll(async () => {
  h = await startTidectlHarness(tag);
});
afterAll(async () => {
  await h.close();
});

const tidectl = (...argv: string[]) => h.tidectl(...argv);
const handler = (input: string, init: RequestInit) => h.fetch(input, init);

async function json<T>(...argv: string[]): Promise<T> {
  const r = await tidectl(...argv, "--json");
  expect(r.err).toBe("");
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as T;
}

interface PoolJson {
  id: string;
  name: string;
  hashFields: string[];
  binds: { address: string; portStart: number }[];
  proxies: { hostname: string; state: string }[];
  directors: { hostname: string }[];
}

describe("tidectl against the real API", () => {
  it("runs a pool's life by names: create, proxies, drain, hash fields, director, delete", async () => {
    const created = await tidectl(
      "pool",
      "create",
      poolName,
      "--bind",
      "tcp 198.51.100.77:443",
      "--description",
      "cli",
    );
    expect(created.err).toBe("");
    expect(created.code).toBe(0);
    expect(created.out).toContain(`created pool ${poolName}`);

    // The API's field errors come through: two binds of one pool that overlap, an address
    // that only looks like one (tidectl checks syntax; the API checks addresses).
    const overlap = await tidectl(
      "pool",
      "create",
      `${poolName}-b`,
      "--bind",
      "tcp 198.51.100.0/24:443",
      "--bind",
      "tcp 198.51.100.77:400-500",
    );
    expect(overlap.code).toBe(1);
    expect(overlap.err).toMatch(/\(HTTP 409, conflict\)\n {2}binds\[1\]: .+/);
    const badAddress = await tidectl("pool", "create", `${poolName}-b`, "--bind", "tcp 198.51.100.300:443");
    expect(badAddress.code).toBe(1);
    expect(badAddress.err).toContain(
      '\n  binds[0].address: Bind address "198.51.100.300" is not an IP address',
    );
    expect((await json<PoolJson[]>("pool", "list")).map((p) => p.name)).not.toContain(`${poolName}-b`);

    for (const i of [1, 2, 3]) {
      const added = await tidectl("proxy", "add", poolName, `10.77.${tag.length}.${i}`, `${poolName}-p${i}`);
      expect(added.err).toBe("");
      expect(added.code).toBe(0);
    }
    const drained = await tidectl("proxy", "drain", `${poolName}-p2`, "--reason", "kernel upgrade");
    expect(drained.err).toBe("");
    expect(drained.out).toMatch(
      new RegExp(`^${poolName}-p2 \\S+ \\(prx_\\w+\\): draining, healthy; table version v\\d+ written\\n$`),
    );
    const again = await tidectl("proxy", "drain", `${poolName}-p2`);
    expect(again.code).toBe(1);
    expect(again.err).toContain("invalid_transition");

    const preview = await tidectl("pool", "hash-fields", poolName, "src_addr,src_port", "--preview");
    expect(preview.err).toBe("");
    expect(preview.out).toMatch(
      /^src_addr -> src_addr,src_port: \d+ of \d+ sampled client flows \(\d+\.\d\d%\) would change primary proxy\n$/,
    );
    expect((await json<PoolJson>("pool", "show", poolName)).hashFields).toEqual(["src_addr"]);
    expect((await tidectl("pool", "hash-fields", poolName, "src_port,src_addr")).code).toBe(0);
    expect((await json<PoolJson>("pool", "show", poolName)).hashFields).toEqual(["src_addr", "src_port"]);

    expect((await tidectl("pool", "binds", poolName, "--bind", "tcp 198.51.100.78:8000-8010")).code).toBe(0);
    expect((await tidectl("pool", "binds", poolName)).out).toBe("tcp 198.51.100.78/32:8000-8010\n");

    expect((await tidectl("director", "register", directorName)).code).toBe(0);
    const assigned = await tidectl("director", "assign", directorName, poolName);
    expect(assigned.err).toBe("");
    expect(assigned.out).toContain(`${directorName} (dir_`);
    expect(assigned.out).toContain(`serves ${poolName}`);
    expect((await tidectl("director", "list")).out).toMatch(
      new RegExp(`${directorName.replace(/\./g, "\\.")}\\s+dir_\\w+\\s+${poolName}\\n`),
    );
    const detail = await json<PoolJson>("pool", "show", poolName);
    expect(detail.directors.map((d) => d.hostname)).toEqual([directorName]);
    expect(detail.proxies.map((p) => [p.hostname, p.state])).toEqual([
      [`${poolName}-p1`, "active"],
      [`${poolName}-p2`, "draining"],
      [`${poolName}-p3`, "active"],
    ]);

    // Served: a hash-field change migrates, shows, and is finished by name.
    const keeps = await tidectl("pool", "hash-fields", poolName, "src_addr", "--preview");
    expect(keeps.out).toContain("established connections are kept");
    expect((await tidectl("pool", "hash-fields", poolName, "src_addr")).code).toBe(0);
    expect((await tidectl("pool", "hash-fields", poolName)).out).toMatch(
      /^src_addr \(migrating from src_addr,src_port since \S+\)\n$/,
    );
    const second = await tidectl("pool", "hash-fields", poolName, "dst_port");
    expect(second.code).toBe(1);
    expect(second.err).toContain("Finish that migration first");
    const finished = await tidectl("pool", "hash-fields", poolName, "--finish", "--reason", "cli test");
    expect(finished.err).toBe("");
    expect(finished.out).toContain(`hash-field migration of ${poolName} finished`);
    expect((await tidectl("pool", "hash-fields", poolName)).out).toBe("src_addr\n");

    // Refused while a director serves it, naming the unassign; after unassigning, deleted with
    // its proxies (one still draining).
    const refused = await tidectl("pool", "delete", poolName);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`tidectl director unassign ${directorName} ${poolName}`);
    expect((await tidectl("director", "unassign", directorName, poolName)).code).toBe(0);
    expect((await tidectl("director", "remove", directorName)).code).toBe(0);
    expect((await json<{ hostname: string }[]>("director", "list")).map((d) => d.hostname)).not.toContain(
      directorName,
    );

    const gone = await tidectl("pool", "delete", poolName, "--reason", "retired");
    expect(gone.err).toBe("");
    expect((await json<PoolJson[]>("pool", "list")).map((p) => p.name)).not.toContain(poolName);

    // An empty pool (no proxies, no director) can go.
    expect((await tidectl("pool", "create", `${poolName}-e`, "--bind", "udp:198.51.100.79:53")).code).toBe(0);
    const deleted = await tidectl("pool", "delete", `${poolName}-e`, "--reason", "test over");
    expect(deleted.err).toBe("");
    expect(deleted.out).toMatch(new RegExp(`^deleted pool ${poolName}-e \\(pool_\\w+\\)\\n$`));
    expect((await json<PoolJson[]>("pool", "list")).map((p) => p.name)).not.toContain(`${poolName}-e`);
  });

  it("manages a user by email: create, role, disable, enable, reset-password", async () => {
    const email = `ops-${tag}@test.local`;
    const created = await tidectl("user", "create", email, "--name", "Ops", "--role", "viewer");
    expect(created.err).toBe("");
    expect(created.out).toMatch(
      new RegExp(
        `^created ${email} \\(usr_\\w+\\), viewer, enabled\\npassword \\(shown once\\): \\S{12,}\\n$`,
      ),
    );
    const dupe = await tidectl("user", "create", email.toUpperCase(), "--name", "Ops", "--role", "viewer");
    expect(dupe.code).toBe(1);
    expect(dupe.err).toMatch(/\n {2}email: /);

    expect((await tidectl("user", "role", email, "operator")).out).toMatch(/, operator, enabled\n$/);
    expect((await tidectl("user", "disable", email)).out).toMatch(/, operator, disabled since \S+\n$/);
    expect((await tidectl("user", "enable", email)).out).toMatch(/, operator, enabled\n$/);
    const reset = await tidectl("user", "reset-password", email);
    expect(reset.out).toMatch(
      new RegExp(`^password reset for ${email}\\npassword \\(shown once\\): \\S{12,}\\n$`),
    );
    const users = await json<{ email: string; role: string; disabledAt: string | null }[]>("user", "list");
    expect(users.find((u) => u.email === email)).toMatchObject({ role: "operator", disabledAt: null });
  });

  it("exits 1 with the API's message for a bad token, 2 without one", async () => {
    const bad = await runCli(["pool", "list"], {
      stdout: () => undefined,
      stderr: (t) => expect(t).toMatch(/\(HTTP 401, unauthorized\)/),
      cwd: process.cwd(),
      env: { TIDE_TOKEN: "tide_not-a-real-token" },
      fetch: handler,
    });
    expect(bad).toBe(1);
    const none = await runCli(["pool", "list"], {
      stdout: () => undefined,
      stderr: () => undefined,
      cwd: process.cwd(),
      env: {},
      fetch: handler,
    });
    expect(none).toBe(2);
  });
});
