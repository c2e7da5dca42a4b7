import { TideError, type EnrollmentTokenState } from "@tide/contracts";

/**
 * What an enrollment token is worth at a moment, and what a host that presents a spent one is
 * told. Pure: enrollment-tokens.service.ts claims tokens in one UPDATE (the truth under races)
 * and asks this only to explain a refusal or to label a list, with the clock the claim used.
 */

/** The stored facts that decide a token's state. */
export interface EnrollmentTokenFacts {
  expiresAt: Date;
  usedAt: Date | null;
  revokedAt: Date | null;
}

/**
 * used, then revoked, then expired, else pending. A token expires at expiresAt itself (the claim's
 * `expires_at > now()`): one that expires exactly now is expired. A used token stays "used" even
 * after it expires: what happened to it matters more than the clock.
 */
export function enrollmentTokenState(t: EnrollmentTokenFacts, now: Date): EnrollmentTokenState {
  if (t.usedAt) return "used";
  if (t.revokedAt) return "revoked";
  if (t.expiresAt.getTime() <= now.getTime()) return "expired";
  return "pending";
}

/** The command that makes a new token for the host, as the refusals print it. */
export function hostAddCommand(hostname: string, roles: readonly string[]): string {
  return roles.length > 0
    ? `tidectl host add ${hostname} --role ${roles.join(",")}`
    : `tidectl host add ${hostname}`;
}

/** What redeeming knows of a token it could not claim (null: no token has that hash). */
export interface RefusedToken extends EnrollmentTokenFacts {
  hostname: string;
  roles: readonly string[];
  /** The host it enrolled, when it was used and that host still exists. */
  usedByHostName: string | null;
}

/**
 * The plain refusal for a token that could not be claimed at `now`. An unknown, expired or revoked
 * token is no credential (401); a spent one is a conflict (409), which also tells an agent whose
 * first reply was lost that its retry cannot succeed. `details.enrollment` names the state so a
 * client can branch without reading the sentence. The token itself is never in the message.
 */
export function redeemRefusal(token: RefusedToken | null, now: Date): TideError {
  if (!token) {
    return new TideError(
      "unauthorized",
      "This is not a valid enrollment token: check that it was copied whole, or ask an admin for a new one (tidectl host add <name> --role …).",
      { enrollment: "unknown" },
    );
  }
  const again = hostAddCommand(token.hostname, token.roles);
  const state = enrollmentTokenState(token, now);
  switch (state) {
    case "used":
      return new TideError(
        "conflict",
        `This enrollment token was already used by ${token.usedByHostName ?? token.hostname} at ${token.usedAt?.toISOString()}; a token enrolls one host once. To enroll again, make a new one: ${again}`,
        { enrollment: state },
      );
    case "revoked":
      return new TideError(
        "unauthorized",
        `This enrollment token for ${token.hostname} was revoked at ${token.revokedAt?.toISOString()}; ask an admin for a new one: ${again}`,
        { enrollment: state },
      );
    case "expired":
      return new TideError(
        "unauthorized",
        `This enrollment token for ${token.hostname} expired at ${token.expiresAt.toISOString()}; make a new one: ${again}`,
        { enrollment: state },
      );
    case "pending":
      // Not claimable by the database's clock yet pending by ours: the claim and this read raced
      // with a use or a revocation, or the clocks differ. Say what we know without guessing.
      return new TideError(
        "conflict",
        `This enrollment token for ${token.hostname} could not be used just now (it changed while this request ran); try again, or make a new one: ${again}`,
        { enrollment: state },
      );
  }
}
