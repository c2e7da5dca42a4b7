import { describe, expect, it } from "vitest";
import {
  enrollmentTokenState,
  hostAddCommand,
  redeemRefusal,
  type RefusedToken,
} from "./enrollment-token.plan";

const NOW = new Date("2026-11-28T10:00:00.000Z");
const at = (offsetMs: number) => new Date(NOW.getTime() + offsetMs);

const fresh = { expiresAt: at(60 * 60_000), usedAt: null, revokedAt: null };

describe("enrollmentTokenState at the boundaries", () => {
  it.each([
    ["unused, expires in an hour", fresh, "pending"],
    ["unused, expires in 1 ms", { ...fresh, expiresAt: at(1) }, "pending"],
    ["unused, expires exactly now", { ...fresh, expiresAt: at(0) }, "expired"],
    ["unused, expired 1 ms ago", { ...fresh, expiresAt: at(-1) }, "expired"],
    ["used a minute ago", { ...fresh, usedAt: at(-60_000) }, "used"],
    ["used, and expired since", { ...fresh, expiresAt: at(-1), usedAt: at(-60_000) }, "used"],
    ["revoked", { ...fresh, revokedAt: at(-1) }, "revoked"],
    ["revoked, and expired since", { ...fresh, expiresAt: at(-1), revokedAt: at(-60_000) }, "revoked"],
    ["used and revoked (a use wins)", { ...fresh, usedAt: at(-2), revokedAt: at(-1) }, "used"],
  ] as const)("%s -> %s", (_, facts, state) => {
    expect(enrollmentTokenState(facts, NOW)).toBe(state);
  });
});

describe("redeemRefusal: a plain reason, never the token", () => {
  const token: RefusedToken = {
    ...fresh,
    hostname: "lb-fra-07",
    roles: ["proxy", "director"],
    usedByHostName: null,
  };

  it("an unknown token is 401 and says so", () => {
    const e = redeemRefusal(null, NOW);
    expect(e.code).toBe("unauthorized");
    expect(e.message).toMatch(/^This is not a valid enrollment token/);
    expect(e.details).toEqual({ enrollment: "unknown" });
  });

  it("a used token is 409, naming the host and the time", () => {
    const e = redeemRefusal({ ...token, usedAt: at(-60_000), usedByHostName: "lb-fra-07" }, NOW);
    expect(e.code).toBe("conflict");
    expect(e.message).toBe(
      "This enrollment token was already used by lb-fra-07 at 2026-11-28T09:59:00.000Z; a token enrolls one host once. To enroll again, make a new one: tidectl host add lb-fra-07 --role proxy,director",
    );
    expect(e.details).toEqual({ enrollment: "used" });
  });

  it("a used token whose host was removed since names the host it was made for", () => {
    const e = redeemRefusal({ ...token, usedAt: at(-60_000) }, NOW);
    expect(e.message).toContain("already used by lb-fra-07 at");
  });

  it("an expired token is 401 with the time and the command for a new one", () => {
    const e = redeemRefusal({ ...token, expiresAt: at(0) }, NOW);
    expect(e.code).toBe("unauthorized");
    expect(e.message).toBe(
      "This enrollment token for lb-fra-07 expired at 2026-11-28T10:00:00.000Z; make a new one: tidectl host add lb-fra-07 --role proxy,director",
    );
    expect(e.details).toEqual({ enrollment: "expired" });
  });

  it("a revoked token is 401 with the time", () => {
    const e = redeemRefusal({ ...token, revokedAt: at(-5_000) }, NOW);
    expect(e.code).toBe("unauthorized");
    expect(e.message).toBe(
      "This enrollment token for lb-fra-07 was revoked at 2026-11-28T09:59:55.000Z; ask an admin for a new one: tidectl host add lb-fra-07 --role proxy,director",
    );
  });

  it("a token pending by this clock (a race with a use) is a conflict to retry, not a 500", () => {
    const e = redeemRefusal(token, NOW);
    expect(e.code).toBe("conflict");
    expect(e.details).toEqual({ enrollment: "pending" });
  });
});

describe("hostAddCommand", () => {
  it("names the roles to give again", () => {
    expect(hostAddCommand("web-1", ["proxy"])).toBe("tidectl host add web-1 --role proxy");
    expect(hostAddCommand("web-1", [])).toBe("tidectl host add web-1");
  });
});
