import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTempCluster, type TempCluster } from "./temp-cluster";

describe("the integration database (global setup)", () => {
  it("is migrated and reachable as the non-superuser app role", async () => {
    const client = new pg.Client({ connectionString: inject("databaseUrl") });
    await client.connect();
    try {
      const role = await client.query<{ rolsuper: boolean; rolcreatedb: boolean }>(
        "SELECT rolsuper, rolcreatedb FROM pg_roles WHERE rolname = current_user",
      );
      expect(role.rows[0]).toEqual({ rolsuper: false, rolcreatedb: true });
      const migrations = await client.query<{ count: string }>(
        "SELECT count(*) FROM _prisma_migrations WHERE finished_at IS NOT NULL",
      );
      expect(Number(migrations.rows[0]?.count)).toBeGreaterThan(0);
      expect(process.env.DATABASE_URL).toBe(inject("databaseUrl"));
    } finally {
      await client.end();
    }
  });
});

describe("startTempCluster", () => {
  let cluster: TempCluster;
  beforeAll(async () => {
    cluster = await startTempCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it("listens on 127.0.0.1 only and stores data", async () => {
    expect(new URL(cluster.url).hostname).toBe("127.0.0.1");
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    try {
      const listen = await client.query<{ listen_addresses: string }>("SHOW listen_addresses");
      expect(listen.rows[0]?.listen_addresses).toBe("127.0.0.1");
      await client.query("CREATE TABLE pools (id text PRIMARY KEY, name text NOT NULL)");
      await client.query("INSERT INTO pools VALUES ($1, $2)", ["pool_1", "edge"]);
      const rows = await client.query("SELECT id, name FROM pools");
      expect(rows.rows).toEqual([{ id: "pool_1", name: "edge" }]);
    } finally {
      await client.end();
    }
  });

  it("serves the same database over its Unix socket (socketUrl), for a client on this machine", async () => {
    const client = new pg.Client({ connectionString: cluster.socketUrl });
    await client.connect();
    try {
      // inet_server_addr() is null on a Unix-socket connection, the address on a TCP one.
      const r = await client.query<{ addr: string | null; db: string; user: string }>(
        "SELECT inet_server_addr()::text AS addr, current_database() AS db, current_user AS user",
      );
      expect(r.rows[0]).toEqual({ addr: null, db: "tide", user: "tide" });
    } finally {
      await client.end();
    }
  });

  it("lets the app role create and drop databases (Prisma's shadow database needs it)", async () => {
    const admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    try {
      await admin.query("CREATE DATABASE scratch");
      const scratchUrl = new URL(cluster.url);
      scratchUrl.pathname = "/scratch";
      const scratch = new pg.Client({ connectionString: scratchUrl.toString() });
      await scratch.connect();
      const db = await scratch.query<{ db: string }>("SELECT current_database() AS db");
      await scratch.end();
      expect(db.rows[0]?.db).toBe("scratch");
      await admin.query("DROP DATABASE scratch");
    } finally {
      await admin.end();
    }
  });

  it("removes every file on stop", async () => {
    const other = await startTempCluster();
    const { existsSync } = await import("node:fs");
    expect(existsSync(other.dir)).toBe(true);
    await other.stop();
    expect(existsSync(other.dir)).toBe(false);
    await expect(
      new pg.Client({ connectionString: other.url, connectionTimeoutMillis: 2000 }).connect(),
    ).rejects.toThrow();
  });
});
