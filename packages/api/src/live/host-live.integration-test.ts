import { newId } from "@tide/contracts";
import { createDb, type Db } from "@tide/db";
import { waitFor } from "@tide/devstack/wait";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { truncateAll } from "../testing/fixtures";
import { createHostListener, OBSERVATIONS_CHANNEL, type HostChange } from "./host-live";

let db: Db;
let admin: pg.Client;

beforeAll(async () => {
  db = createDb(inject("databaseUrl"), { max: 4 });
  admin = new pg.Client({ connectionString: inject("databaseUrl") });
  await admin.connect();
});
afterAll(async () => {
  await admin.end();
  await db.$disconnect();
});
beforeEach(async () => {
  await truncateAll(db);
});

/** Backends of this database whose last statement was our LISTENs (the shared connection). */
async function listeners(): Promise<number[]> {
  const r = await admin.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND starts_with(query, $1) AND pid <> pg_backend_pid()`,
    [`LISTEN ${OBSERVATIONS_CHANNEL}`],
  );
  return r.rows.map((x) => x.pid);
}

/** How long and how often the tests below look again (LISTEN/NOTIFY answers in milliseconds). */
const POLL = { timeoutMs: 15_000, intervalMs: 50 };

const notify = (payload: string) => admin.query(`SELECT pg_notify($1, $2)`, [OBSERVATIONS_CHANNEL, payload]);

describe("shared LISTEN connection", () => {
  it("fans one connection out to every page of the process, and reconnects", async () => {
    const a = newId("host");
    const b = newId("host");
    const listener = createHostListener(inject("databaseUrl"));
    const got: Record<string, HostChange[]> = { a1: [], a2: [], b: [] };
    const offA1 = await listener.subscribe(a, (c) => got.a1!.push(c));
    const offA2 = await listener.subscribe(a, (c) => got.a2!.push(c));
    const offB = await listener.subscribe(b, (c) => got.b!.push(c));
    expect(listener.size()).toEqual({ hosts: 2, subscribers: 3, connected: true });
    const [pid, ...more] = await listeners();
    expect(more).toEqual([]);

    await notify(a);
    await notify(`${a} findings`);
    await waitFor("A's notifications", () => got.a1!.length === 2 && got.a2!.length === 2, POLL);
    expect(got).toEqual({ a1: ["samples", "findings"], a2: ["samples", "findings"], b: [] });

    // The connection dies: it comes back by itself and everyone is told to re-read.
    await admin.query("SELECT pg_terminate_backend($1)", [pid]);
    await waitFor("the resync after reconnecting", () => got.b!.length === 1, POLL);
    expect(got.b).toEqual(["findings"]);
    const [pid2, ...more2] = await waitFor(
      "a new LISTEN connection",
      async () => {
        const l = await listeners();
        return l.length > 0 && l[0] !== pid && l;
      },
      POLL,
    );
    expect(more2).toEqual([]);
    expect(pid2).not.toBe(pid);
    await notify(b);
    await waitFor("B's notification after the reconnect", () => got.b!.length === 2, POLL);
    expect(got.b).toEqual(["findings", "samples"]);

    // The last page gone: the connection closes.
    offA1();
    offB();
    expect(listener.size()).toEqual({ hosts: 1, subscribers: 1, connected: true });
    offA2();
    expect(listener.size()).toEqual({ hosts: 0, subscribers: 0, connected: false });
    await waitFor("the LISTEN connection to close", async () => (await listeners()).length === 0, POLL);
  });
});
