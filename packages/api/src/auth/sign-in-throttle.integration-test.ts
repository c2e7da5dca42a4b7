import { isTideError, type TideError } from "@tide/contracts";
import { createDb, type Db } from "@tide/db";
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from "vitest";
import { apiEnv } from "../env";
import { tideErrorResponse } from "../http/errors";
import { handleSignIn, PEER_ADDRESS_HEADER } from "../http/sign-in";
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
  await db.$executeRaw`TRUNCATE sign_in_throttles, sign_in_known_sources`;
});

const attempt = (email: string, password: string, source: string | null = "198.51.100.7") =>
  signIn(db, { email, password, sessionHours: 1, source }).then(
    () => "ok" as const,
    (e: unknown) => {
      if (!isTideError(e)) throw e;
      return e;
    },
  );

/** Pretend `seconds` have passed for every recorded sign-in failure and throttle bucket. */
async function age(seconds: number): Promise<void> {
  await db.$executeRaw`
    UPDATE audit_events SET created_at = created_at - make_interval(secs => ${seconds})
    WHERE action = ${SIGN_IN_FAIL_ACTION}`;
  await db.$executeRaw`
    UPDATE sign_in_throttles SET last_at = last_at - make_interval(secs => ${seconds})`;
}

/** Password checks that ran and failed (each is audited; refused attempts are not). */
const checkedFailures = () => db.auditEvent.count({ where: { action: SIGN_IN_FAIL_ACTION } });

/** The request headers `tide-console serve` hands on: the client's own X-Forwarded-For and the socket's peer. */
const fromPeer = (peer: string, forwardedFor?: string) =>
  new Headers({ [PEER_ADDRESS_HEADER]: peer, ...(forwardedFor ? { "x-forwarded-for": forwardedFor } : {}) });

const viaHttp = (email: string, password: string, headers: Headers) =>
  handleSignIn({ email, password }, headers, db).then(
    () => "ok" as const,
    (e: unknown) => {
      if (!isTideError(e)) throw e;
      return e;
    },
  );

const codes = (results: ("ok" | TideError)[]) => {
  const by: Record<string, number> = {};
  for (const r of results) {
    const k = r === "ok" ? "ok" : r.code;
    by[k] = (by[k] ?? 0) + 1;
  }
  return by;
};

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

  it("checks at most the free number of 200 parallel wrong guesses at one account", async () => {
    const user = await makeUser(db, "admin");
    // As many connections as a console's pool and more, so the guesses really run side by side.
    const wide = createDb(inject("databaseUrl"), { max: 20 });
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        signIn(wide, {
          email: user.email,
          password: `wrong-${i}`,
          sessionHours: 1,
          source: "198.51.100.7",
        }).then(
          () => "ok" as const,
          (e: unknown) => {
            if (!isTideError(e)) throw e;
            return e;
          },
        ),
      ),
    ).finally(() => wide.$disconnect());
    // Every guess past the free ones is refused before hashing: the count is taken, not read.
    expect(await checkedFailures()).toBe(ACCOUNT_FREE_FAILURES);
    expect(codes(results)).toEqual({
      unauthorized: ACCOUNT_FREE_FAILURES,
      rate_limited: 200 - ACCOUNT_FREE_FAILURES,
    });
    // And the owner waits out the backoff like everyone else from that address.
    expect(((await attempt(user.email, user.password)) as TideError).code).toBe("rate_limited");
  });

  it("counts a client that forges X-Forwarded-For per request as its one peer address", async () => {
    // 40 guesses at 40 accounts (so no account's own count stops them), each naming a new source.
    const results: ("ok" | TideError)[] = [];
    for (let i = 0; i < 40; i++) {
      results.push(
        await viaHttp(`guess-${i}@test.local`, "wrong", fromPeer("192.0.2.10", `203.0.113.${i + 1}`)),
      );
    }
    expect(codes(results)).toEqual({
      unauthorized: SOURCE_FREE_FAILURES,
      rate_limited: 40 - SOURCE_FREE_FAILURES,
    });
    const sources = await db.auditEvent.findMany({
      where: { action: SIGN_IN_FAIL_ACTION },
      select: { after: true },
    });
    expect(new Set(sources.map((e) => (e.after as { source: string }).source))).toEqual(
      new Set(["192.0.2.10"]),
    );
    // Another address is not held back by that one.
    const user = await makeUser(db, "viewer");
    expect(await viaHttp(user.email, user.password, fromPeer("192.0.2.11"))).toBe("ok");
  });

  it("believes X-Forwarded-For only as far as the trusted proxies vouch for it", async () => {
    // The environment is parsed once; handleSignIn reads the parsed list, so change it there.
    const env = apiEnv();
    const before = env.TIDE_TRUSTED_PROXIES;
    env.TIDE_TRUSTED_PROXIES = ["127.0.0.1", "10.0.0.0/8"];
    try {
      const user = await makeUser(db, "viewer");
      // nginx on this host (127.0.0.1) appended the client's address; the client's own prefix is ignored.
      await viaHttp(user.email, "wrong", fromPeer("127.0.0.1", "6.6.6.6, 198.51.100.77, 10.1.2.3"));
      const [event] = await db.auditEvent.findMany({ where: { action: SIGN_IN_FAIL_ACTION } });
      expect((event?.after as { source: string }).source).toBe("198.51.100.77");
    } finally {
      env.TIDE_TRUSTED_PROXIES = before;
    }
  });

  it("lets the owner in from a known-good address during a flood from many others", async () => {
    const user = await makeUser(db, "admin");
    const home = "198.51.100.20";
    expect(await attempt(user.email, user.password, home)).toBe("ok"); // the owner's usual address
    // 200 parallel guesses from 200 addresses (real ones, through a trusted proxy, or a botnet).
    const flood = () =>
      Promise.all(
        Array.from({ length: 200 }, (_, i) =>
          attempt(user.email, `wrong-${i}`, `203.0.${i >> 8}.${i & 255}`),
        ),
      );
    const first = await flood();
    expect(codes(first)["unauthorized"]).toBe(ACCOUNT_FREE_FAILURES);
    // A new address gets the account's backoff, as the flood does...
    expect(((await attempt(user.email, user.password, "198.51.100.21")) as TideError).code).toBe(
      "rate_limited",
    );
    // ...but the owner's address is not the flood's to exhaust, even while it goes on.
    const [owner] = await Promise.all([attempt(user.email, user.password, home), flood()]);
    expect(owner).toBe("ok");
    expect(await attempt(user.email, user.password, home)).toBe("ok");
    // The owner's own typos from there still count, there.
    for (let i = 0; i < ACCOUNT_FREE_FAILURES; i++) await attempt(user.email, "typo", home);
    expect(((await attempt(user.email, user.password, home)) as TideError).code).toBe("rate_limited");
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
