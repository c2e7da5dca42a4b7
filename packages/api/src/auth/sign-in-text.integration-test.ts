import { createDb, type Db } from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { tideErrorResponse } from "../http/errors";
import { makeUser, truncateAll } from "../testing/fixtures";
import { signIn } from "./sessions";

/**
 * Issue 27 item 8: a lone UTF-16 surrogate in the sign-in email was a 500 (the throttle's and the
 * user's lookups cannot carry it to PostgreSQL). It is the caller's bad input: 400, saying why.
 */

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

/** What the sign-in route answers for what signIn threw (it passes every error to tideErrorResponse). */
async function answer(email: string, password: string) {
  try {
    await signIn(db, { email, password, sessionHours: 1, source: "198.51.100.9" });
    return { status: 200, body: null };
  } catch (e) {
    const res = tideErrorResponse(e);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }
}

describe("sign-in email text", () => {
  it("answers 400 for a lone surrogate, high or low, anywhere in the email", async () => {
    for (const email of ["ad\ud800min@example.com", "admin@example.com\udc00", "\ud83d"]) {
      expect(await answer(email, "violet-kettle-harbour"), JSON.stringify(email)).toEqual({
        status: 400,
        body: {
          code: "bad_request",
          message: "An email address must be valid Unicode (it holds a lone surrogate).",
        },
      });
    }
  });

  it("still signs in, and still answers 401 for a wrong password or a whole surrogate pair", async () => {
    const user = await makeUser(db, "viewer", "violet-kettle-harbour");
    expect((await answer(user.email, "violet-kettle-harbour")).status).toBe(200);
    expect((await answer(user.email, "wrong password here")).status).toBe(401);
    expect((await answer("ada\ud83d\ude00@example.com", "violet-kettle-harbour")).status).toBe(401);
  });
});
