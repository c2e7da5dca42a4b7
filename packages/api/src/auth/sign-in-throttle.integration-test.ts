import { isTideError, type TideError } from "@tide/contracts";
import { createDb, type Db } from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { tideErrorResponse } from "../http/errors";
import { handleSignIn } from "../http/sign-in";
import { makeUser, truncateAll } from "../testing/fixtures";
import { signIn } from "./sessions";
import {
  ACCOUNT_FREE_FAILURES,
  ACCOUNT_MAX_DELAY_S,
  BASE_DELAY_S,
  MAX_DELAY_S,
  SIGN_IN_FAIL_ACTION,
  SOURCE_FREE_FAILURES,
} from "./sign-in-throttle";

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

const attempt = (email: string, password: string, source: string | null = "198.51.100.7") =>
  signIn(db, { email, password, sessionHours: 1, source }).then(
    () => "ok" as const,
    (e: unknown) => {
      if (!isTideError(e)) throw e;
      return e;
    },
  );

/** Pretend `seconds` have passed for every recorded sign-in failure. */
async function age(seconds: number): Promise<void> {
  await db.$executeRaw`
    UPDATE audit_events SET created_at = created_at - make_interval(secs => ${seconds})
    WHERE action = ${SIGN_IN_FAIL_ACTION}`;
}

describe("sign-in throttling", () => {
  it("refuses the right password after repeated wrong ones until the backoff has passed", async () => {
    const user = await makeUser(db, "operator");
    for (let i = 0; i < ACCOUNT_FREE_FAILURES; i++) {
      expect(((await attempt(user.email, `wrong-${i}`)) as TideError).code).toBe("unauthorized");
    }
    const refused = (await attempt(user.email, user.password)) as TideError;
    expect(refused.code).toBe("rate_limited");
    const wait = refused.details?.["retryAfterS"] as number;
    expect(wait).toBeGreaterThan(BASE_DELAY_S - 5);
    expect(wait).toBeLessThanOrEqual(BASE_DELAY_S);

    // Capitals and spaces are the same account: no way around the count.
    expect(((await attempt(` ${user.email.toUpperCase()} `, user.password)) as TideError).code).toBe(
      "rate_limited",
    );
    // Over HTTP: a clear 429 with Retry-After.
    const res = tideErrorResponse(
      await handleSignIn(
        { email: user.email, password: user.password },
        new Headers({ "x-forwarded-for": "198.51.100.7" }),
        db,
      ).catch((e: unknown) => e),
    );
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBe(wait);
    expect(((await res.json()) as { code: string }).code).toBe("rate_limited");

    await age(BASE_DELAY_S - 10);
    expect(((await attempt(user.email, user.password)) as TideError).code).toBe("rate_limited");
    await age(11);
    expect(await attempt(user.email, user.password)).toBe("ok");
  });

  it("doubles the wait for each failure past the free ones, and a success clears the account", async () => {
    const user = await makeUser(db, "viewer");
    for (let i = 0; i < ACCOUNT_FREE_FAILURES; i++) await attempt(user.email, "wrong");
    await age(BASE_DELAY_S + 1);
    expect(((await attempt(user.email, "wrong again")) as TideError).code).toBe("unauthorized");
    const second = (await attempt(user.email, user.password)) as TideError;
    expect(second.code).toBe("rate_limited");
    expect(second.details?.["retryAfterS"]).toBeGreaterThan(BASE_DELAY_S);
    await age(2 * BASE_DELAY_S + 1);
    expect(await attempt(user.email, user.password)).toBe("ok");
    // After a success the account starts again with its free failures.
    for (let i = 0; i < ACCOUNT_FREE_FAILURES - 1; i++) await attempt(user.email, "wrong");
    expect(await attempt(user.email, user.password)).toBe("ok");
  });

  it("keeps an account's wait short, so a flood cannot lock its owner out for long", async () => {
    const user = await makeUser(db, "admin");
    // An attacker who knows the email fails from 30 addresses (each well under its own limit).
    for (let i = 0; i < 25; i++) {
      if (i > 0) await age(ACCOUNT_MAX_DELAY_S + 1); // each attempt gets through the account's backoff
      expect(((await attempt(user.email, "wrong", `203.0.113.${i + 1}`)) as TideError).code).toBe(
        "unauthorized",
      );
    }
    const refused = (await attempt(user.email, user.password, "198.51.100.50")) as TideError;
    expect(refused.code).toBe("rate_limited");
    expect(refused.details?.["retryAfterS"]).toBeGreaterThan(ACCOUNT_MAX_DELAY_S - 5);
    expect(refused.details?.["retryAfterS"]).toBeLessThanOrEqual(ACCOUNT_MAX_DELAY_S);
    expect(ACCOUNT_MAX_DELAY_S).toBeLessThan(MAX_DELAY_S);
  });

  it("throttles a source address that tries many accounts, not the others", async () => {
    const user = await makeUser(db, "viewer");
    for (let i = 0; i < SOURCE_FREE_FAILURES; i++) {
      expect(((await attempt(`guess-${i}@test.local`, "wrong", "203.0.113.9")) as TideError).code).toBe(
        "unauthorized",
      );
    }
    expect(((await attempt(user.email, user.password, "203.0.113.9")) as TideError).code).toBe(
      "rate_limited",
    );
    expect(await attempt(user.email, user.password, "198.51.100.20")).toBe("ok");
  });

  it("audits each failure with the attempted email as actor and never the password", async () => {
    const user = await makeUser(db, "operator");
    await attempt(` ${user.email.toUpperCase()}`, "hunter2-secret-guess");
    await attempt("nobody@test.local", "another-secret-guess");
    const events = await db.auditEvent.findMany({
      where: { action: SIGN_IN_FAIL_ACTION },
      orderBy: { createdAt: "asc" },
    });
    expect(events.map((e) => [e.actorLabel, e.targetId, e.after])).toEqual([
      [user.email, user.email, { source: "198.51.100.7", reason: "wrong_password" }],
      ["nobody@test.local", "nobody@test.local", { source: "198.51.100.7", reason: "unknown_email" }],
    ]);
    expect(JSON.stringify(events)).not.toMatch(/secret-guess/);
  });

  it("refuses an email with a NUL byte as a bad request, not a 500", async () => {
    const e = (await attempt("a\u0000@test.local", "whatever")) as TideError;
    expect(e.code).toBe("bad_request");
  });
});
