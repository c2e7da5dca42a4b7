import { TideError } from "@tide/contracts";
import type { Db, Prisma } from "@tide/db";
import { recordAudit } from "../services/audit.service";

/**
 * Sign-in throttling, kept in PostgreSQL: every failed sign-in is an audit event
 * ("session.fail", target "sign_in"/<email>, the source address in `after`), and the throttle
 * counts those events. So every console process sees the same counts (the console may run as
 * several processes), a restart does not forget them, and the audit log is the one record of
 * what happened. Throttled attempts are refused before any password hashing and are not audited
 * (a flood would otherwise grow the log at wire speed).
 *
 * Backoff: the first FREE failures are free; after that each further failure doubles the wait,
 * starting at BASE_DELAY_S and capped, counted from the newest failure: at MAX_DELAY_S for a source
 * address, at ACCOUNT_MAX_DELAY_S for an account. The account's cap is short on purpose: anyone who
 * knows an email can fail its sign-ins, and a 15-minute cap let a flood keep the admin out (measured
 * by e2e/bench/hardening-load.bench.ts). Two minutes still holds a guesser to ~720 guesses a day
 * per account from everywhere together, against passwords the policy checked. Failures
 * older than WINDOW_S are forgotten; a successful sign-in clears the account's count (not the
 * source's).
 */
export const ACCOUNT_FREE_FAILURES = 5;
/** Higher than per account: one office behind NAT may share an address. */
export const SOURCE_FREE_FAILURES = 20;
export const BASE_DELAY_S = 30;
export const MAX_DELAY_S = 15 * 60;
export const ACCOUNT_MAX_DELAY_S = 2 * 60;
export const WINDOW_S = 60 * 60;

export const SIGN_IN_FAIL_ACTION = "session.fail";
const TARGET_TYPE = "sign_in";

/** Seconds to wait after the newest of `failures` failures (0: no wait). */
export function backoffSeconds(failures: number, free: number, max = MAX_DELAY_S): number {
  if (failures < free) return 0;
  return Math.min(max, BASE_DELAY_S * 2 ** Math.min(failures - free, 20));
}

/** Seconds until a sign-in may be tried, given `failures` with the newest at `last` (0: now). */
export function retryAfterSeconds(
  failures: number,
  last: Date | null,
  free: number,
  now: Date,
  max = MAX_DELAY_S,
): number {
  const wait = backoffSeconds(failures, free, max);
  if (wait === 0 || !last) return 0;
  return Math.max(0, Math.ceil((last.getTime() + wait * 1000 - now.getTime()) / 1000));
}

interface FailureCount {
  n: number;
  last: Date | null;
  now: Date;
}

async function accountFailures(db: Db, email: string): Promise<FailureCount> {
  const rows = await db.$queryRaw<FailureCount[]>`
    SELECT count(*)::int AS n, max(f.created_at) AS last, now() AS now
    FROM audit_events f
    WHERE f.target_type = ${TARGET_TYPE} AND f.target_id = ${email} AND f.action = ${SIGN_IN_FAIL_ACTION}
      AND f.created_at > now() - make_interval(secs => ${WINDOW_S})
      AND f.created_at > coalesce((
        SELECT max(s.created_at) FROM audit_events s
        JOIN users u ON u.id = s.target_id
        WHERE s.target_type = 'user' AND s.action = 'session.create' AND u.email = ${email}
      ), '-infinity'::timestamptz)`;
  return rows[0] ?? { n: 0, last: null, now: new Date() };
}

async function sourceFailures(db: Db, source: string): Promise<FailureCount> {
  const rows = await db.$queryRaw<FailureCount[]>`
    SELECT count(*)::int AS n, max(created_at) AS last, now() AS now
    FROM audit_events
    WHERE created_at > now() - make_interval(secs => ${WINDOW_S})
      AND action = ${SIGN_IN_FAIL_ACTION} AND target_type = ${TARGET_TYPE}
      AND after ->> 'source' = ${source}`;
  return rows[0] ?? { n: 0, last: null, now: new Date() };
}

/** Refuse (429 with retryAfterS) while the account or the source address is backing off. */
export async function assertSignInAllowed(db: Db, email: string, source: string | null): Promise<void> {
  const account = await accountFailures(db, email);
  let wait = retryAfterSeconds(
    account.n,
    account.last,
    ACCOUNT_FREE_FAILURES,
    account.now,
    ACCOUNT_MAX_DELAY_S,
  );
  if (source) {
    const bySource = await sourceFailures(db, source);
    wait = Math.max(wait, retryAfterSeconds(bySource.n, bySource.last, SOURCE_FREE_FAILURES, bySource.now));
  }
  if (wait > 0) {
    throw new TideError("rate_limited", `Too many failed sign-ins; try again in ${wait} s.`, {
      retryAfterS: wait,
    });
  }
}

/** Audit one failed sign-in: the actor is the attempted email (never the password). */
export async function recordSignInFailure(
  db: Db | Prisma.TransactionClient,
  input: { email: string; source: string | null; reason: string },
): Promise<void> {
  await recordAudit(db, {
    actorKind: "user",
    actorId: null,
    actorLabel: input.email,
    action: SIGN_IN_FAIL_ACTION,
    targetType: TARGET_TYPE,
    targetId: input.email,
    after: { source: input.source, reason: input.reason },
  });
}
