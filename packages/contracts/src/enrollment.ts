import { z } from "zod";
import { HostRole } from "./agent-protocol";
import { EnrollmentTokenId } from "./ids";
import { HostId } from "./observations";

/**
 * Enrollment: a host joins the fleet with one command.
 *
 *   admin:  POST /api/v1/enrollment-tokens  EnrollmentTokenCreateIn -> EnrollmentTokenCreated
 *           (console: Hosts -> Add host; tidectl host add NAME --role proxy)
 *   host:   tide-agent enroll https://console.example.net --token tide_enroll_…
 *           -> POST /api/v1/enroll  EnrollIn -> EnrollOut   (no other credential: the token is it)
 *
 * An enrollment token names the host and its roles, expires, is stored as sha256 like every other
 * secret, and is spent by its first successful use: the console then issues that host its own host
 * token (tide_host_…), which the agent keeps in a 0600 file. Spent, expired and revoked tokens are
 * refused with the reason; each step is audited (enrollment_token.create / .revoke / .redeem).
 */

/** Enrollment tokens start with this: logs and scanners can tell them from API and host tokens. */
export const ENROLLMENT_TOKEN_PREFIX = "tide_enroll_";

/** How long a new enrollment token lives unless the admin says otherwise (minutes). */
export const ENROLLMENT_DEFAULT_TTL_MINUTES = 60;
/** Longest an enrollment token may live (7 days, in minutes): a leaked one must not keep working. */
export const ENROLLMENT_MAX_TTL_MINUTES = 7 * 24 * 60;
/** Shortest (minutes): long enough to copy a command to a host. */
export const ENROLLMENT_MIN_TTL_MINUTES = 5;

/** Roles an enrolled host can be given (every agent samples its host; "host" alone means no data plane). */
export const EnrollmentRoles = z
  .array(HostRole)
  .min(1, "choose at least one role (proxy, director or host)")
  .max(3)
  .refine((roles) => new Set(roles).size === roles.length, "a role is listed twice")
  .describe("What the host runs: proxy (tide-redirect), director (tide-director), host (sampling only)");

export const EnrollmentTokenCreateIn = z
  .strictObject({
    hostname: HostId.describe("Name the host will have in the fleet (what its agent reports)"),
    roles: EnrollmentRoles,
    expiresInMinutes: z
      .number()
      .int()
      .min(ENROLLMENT_MIN_TTL_MINUTES)
      .max(ENROLLMENT_MAX_TTL_MINUTES)
      .default(ENROLLMENT_DEFAULT_TTL_MINUTES)
      .describe(
        `Minutes until the token expires (${ENROLLMENT_MIN_TTL_MINUTES}..${ENROLLMENT_MAX_TTL_MINUTES}, default ${ENROLLMENT_DEFAULT_TTL_MINUTES})`,
      ),
  })
  .describe("A one-time enrollment token for a new host");
export type EnrollmentTokenCreateIn = z.infer<typeof EnrollmentTokenCreateIn>;

export const EnrollmentTokenState = z
  .enum(["pending", "used", "expired", "revoked"])
  .describe("pending until used, expired or revoked");
export type EnrollmentTokenState = z.infer<typeof EnrollmentTokenState>;

export const EnrollmentTokenSummary = z
  .strictObject({
    id: EnrollmentTokenId,
    prefix: z
      .string()
      .describe("First characters of the token, to recognise it (the rest is never shown again)"),
    hostname: HostId,
    roles: z.array(HostRole),
    state: EnrollmentTokenState,
    createdBy: z.string().describe("Email of the admin who made it"),
    createdAt: z.string().datetime(),
    expiresAt: z.string().datetime(),
    usedAt: z.string().datetime().nullable().describe("When a host redeemed it"),
    revokedAt: z.string().datetime().nullable(),
  })
  .describe("An enrollment token, without its secret");
export type EnrollmentTokenSummary = z.infer<typeof EnrollmentTokenSummary>;

export const EnrollmentTokenCreated = z
  .strictObject({
    token: z
      .string()
      .startsWith(ENROLLMENT_TOKEN_PREFIX)
      .describe("The secret: shown once, never stored in clear"),
    command: z
      .string()
      .describe("The exact command to run on the host (tide-agent enroll <console URL> --token …)"),
    summary: EnrollmentTokenSummary,
  })
  .describe("A new enrollment token and the command that uses it");
export type EnrollmentTokenCreated = z.infer<typeof EnrollmentTokenCreated>;

export const EnrollIn = z
  .strictObject({
    token: z
      .string()
      .startsWith(ENROLLMENT_TOKEN_PREFIX, "is not an enrollment token (tide_enroll_…)")
      .max(200),
    agentVersion: z.string().min(1).max(64).describe("tide-agent version doing the enrollment"),
    kernelRelease: z.string().max(128).nullable().describe("uname -r of the host"),
  })
  .describe("A host trades its enrollment token for its own host token");
export type EnrollIn = z.infer<typeof EnrollIn>;

export const EnrollOut = z
  .strictObject({
    hostId: z.string().describe("Host record id (host_…)"),
    hostname: HostId.describe("The host's name in the fleet: the agent reports this name"),
    roles: z.array(HostRole).describe("Roles the admin chose"),
    hostToken: z.string().describe("The host's own token (tide_host_…): keep it in a 0600 file"),
    consoleVersion: z.string().describe("The console's Tide version"),
  })
  .describe("What an enrolled host needs to write its configuration");
export type EnrollOut = z.infer<typeof EnrollOut>;
