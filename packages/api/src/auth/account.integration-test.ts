import { isTideError, type TideError } from "@tide/contracts";
import { createDb, type Db } from "@tide/db";
import { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { callerFor, makeUser, restCall, truncateAll } from "../testing/fixtures";
import { actorFromSession, signIn } from "./sessions";
import { createToken } from "./tokens.service";

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

function tideError(e: unknown): TideError {
  const cause = e instanceof TRPCError ? e.cause : e;
  if (!isTideError(cause)) throw new Error(`expected a TideError, got ${String(e)}`);
  return cause;
}

const NEW_PASSWORD = "violet-kettle-harbour";

describe("auth.changePassword", () => {
  it("needs the current password, keeps this session, ends the others, and is audited", async () => {
    const user = await makeUser(db, "viewer");
    const here = await signIn(db, { email: user.email, password: user.password, sessionHours: 1 });
    const elsewhere = await signIn(db, { email: user.email, password: user.password, sessionHours: 1 });
    const actor = (await actorFromSession(db, here.cookieValue))!;
    const caller = callerFor(db, actor);

    const wrong = tideError(
      await caller.auth
        .changePassword({ currentPassword: "not my password", newPassword: NEW_PASSWORD })
        .catch((e: unknown) => e),
    );
    expect(wrong.code).toBe("bad_request");
    expect(wrong.details?.["fields"]).toHaveProperty("currentPassword");

    for (const [weak, why] of [
      ["short", /at least 12/],
      ["aaaaaaaaaaaaaaaa", /repeated/],
      [user.email.toUpperCase(), /email/],
      ["password1234", /common/],
    ] as const) {
      const e = tideError(
        await caller.auth
          .changePassword({ currentPassword: user.password, newPassword: weak })
          .catch((x: unknown) => x),
      );
      expect(e.code).toBe("bad_request");
      expect(e.message).toMatch(why);
    }

    expect(
      await caller.auth.changePassword({ currentPassword: user.password, newPassword: NEW_PASSWORD }),
    ).toEqual({ sessionsEnded: 1 });
    expect(await actorFromSession(db, here.cookieValue)).not.toBeNull();
    expect(await actorFromSession(db, elsewhere.cookieValue)).toBeNull();

    const old = await signIn(db, { email: user.email, password: user.password, sessionHours: 1 }).catch(
      (e: unknown) => e,
    );
    expect(tideError(old).code).toBe("unauthorized");
    await signIn(db, { email: user.email, password: NEW_PASSWORD, sessionHours: 1 });

    const audit = await db.auditEvent.findMany({
      where: { action: { in: ["user.change_password", "session.fail"] } },
      orderBy: { createdAt: "asc" },
      select: { action: true, actorLabel: true, targetId: true, after: true },
    });
    expect(audit).toEqual([
      {
        action: "session.fail",
        actorLabel: user.email,
        targetId: user.email,
        after: { source: null, reason: "change_password" },
      },
      {
        action: "user.change_password",
        actorLabel: user.email,
        targetId: user.userId,
        after: { sessionsEnded: 1 },
      },
      {
        action: "session.fail",
        actorLabel: user.email,
        targetId: user.email,
        after: { source: null, reason: "wrong_password" },
      },
    ]);
    expect(JSON.stringify(audit)).not.toContain(NEW_PASSWORD);
  });

  it("is POST /me/password over REST, for a token's user too (ending all their sessions)", async () => {
    const user = await makeUser(db, "operator");
    await signIn(db, { email: user.email, password: user.password, sessionHours: 1 });
    const { token } = await createToken(db, user, { name: "cli", scopes: ["read"] });
    const anonymous = await restCall(db, "POST", "/me/password", {
      body: { currentPassword: user.password, newPassword: NEW_PASSWORD },
    });
    expect(anonymous.status).toBe(401);
    const res = await restCall(db, "POST", "/me/password", {
      token,
      body: { currentPassword: user.password, newPassword: NEW_PASSWORD },
    });
    expect(res).toEqual({ status: 200, body: { sessionsEnded: 1 } });
    expect(await db.session.count()).toBe(0);
  });
});
