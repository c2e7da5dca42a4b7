import { createDb, type Db } from "@tide/db";
import { waitFor } from "@tide/devstack/wait";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { makeUser, truncateAll } from "../testing/fixtures";
import { actorFromToken, apiTokenCacheFor, createToken, revokeToken } from "./tokens.service";
import { disableUser, updateUser } from "./users.service";

/**
 * The API token cache against PostgreSQL: answered from memory, and a change by any writer (another
 * console, plain SQL) ends the entry as soon as the database announces it (migration auth_notify).
 * Two clients stand for two console processes: each has its own cache.
 */
let db: Db;
let other: Db;

beforeAll(() => {
  db = createDb(inject("databaseUrl"), { max: 4 });
  other = createDb(inject("databaseUrl"), { max: 4 });
});
afterAll(async () => {
  await db.$disconnect();
  await other.$disconnect();
});
beforeEach(async () => {
  await truncateAll(db);
});

/** Resolve until the cache trusts its entries (its LISTEN is in place) and holds this token. */
async function cached(client: Db, token: string) {
  await waitFor(
    "the token cache to listen",
    async () => (await actorFromToken(client, token)) !== null && apiTokenCacheFor(client).trusting,
    { timeoutMs: 10_000 },
  );
  await actorFromToken(client, token);
}

describe("API tokens resolved from memory", () => {
  it("answers from memory while nothing that authenticates the token changed", async () => {
    const admin = await makeUser(db, "admin");
    const { token, summary } = await createToken(db, admin, { name: "runbook", scopes: ["read"] });
    await cached(other, token);
    // A column no trigger announces (the label comes from the name): the cached actor keeps it.
    await db.$executeRaw`UPDATE api_tokens SET name = 'renamed' WHERE id = ${summary.id}`;
    await new Promise((r) => setTimeout(r, 300));
    expect((await actorFromToken(other, token))?.label).toBe(`token runbook (${admin.email})`);
  });

  it("refuses a token another writer revoked, as soon as the database announces it", async () => {
    const admin = await makeUser(db, "admin");
    const { token, summary } = await createToken(db, admin, { name: "runbook", scopes: ["read"] });
    await cached(other, token);
    await db.$executeRaw`UPDATE api_tokens SET revoked_at = now() WHERE id = ${summary.id}`;
    await waitFor(
      "the revoked token to be refused",
      async () => (await actorFromToken(other, token)) === null,
      { timeoutMs: 2_000 },
    );
  });

  it("refuses a token revoked through this process on the very next request", async () => {
    const admin = await makeUser(db, "admin");
    const { token, summary } = await createToken(db, admin, { name: "runbook", scopes: ["read"] });
    await cached(db, token);
    await revokeToken(db, admin, summary.id);
    expect(await actorFromToken(db, token)).toBeNull();
  });

  it("narrows a token's scopes when its user is demoted, and refuses it when the user is disabled", async () => {
    const admin = await makeUser(db, "admin");
    const operator = await makeUser(db, "operator");
    const { token } = await createToken(db, operator, { name: "ops", scopes: ["read", "operate"] });
    await cached(db, token);
    await cached(other, token);
    expect((await actorFromToken(other, token))?.scopes).toEqual(["read", "operate"]);

    await updateUser(db, admin, { userId: operator.userId, role: "viewer" });
    expect((await actorFromToken(db, token))?.scopes).toEqual(["read"]); // this process: at once
    await waitFor(
      "the other console to see the demotion",
      async () => (await actorFromToken(other, token))?.scopes.length === 1,
      { timeoutMs: 2_000 },
    );

    await disableUser(db, admin, operator.userId);
    expect(await actorFromToken(db, token)).toBeNull();
    await waitFor(
      "the other console to refuse the disabled user's token",
      async () => (await actorFromToken(other, token)) === null,
      { timeoutMs: 2_000 },
    );
  });
});
