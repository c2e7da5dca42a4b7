import { TideError } from "@tide/contracts";
import { sqlTransaction, type Db, type Prisma } from "@tide/db";
import { recordAudit } from "../services/audit/audit.service";

/**
 * Sign-in throttling, kept in PostgreSQL (every console process sees the same counts, a restart
 * forgets nothing) in sign_in_throttles, one row per bucket. A password check is *reserved*
 * before it runs: in one transaction the attempt's bucket rows are locked, checked and raised, so
 * of 200 parallel guesses exactly the free ones are checked and the rest are refused before any
 * hashing (issue 27: reading the count before writing it let 25 of 200 through). A failed check
 * keeps its count; a successful one gives it back (below). Refused attempts count nothing and are
 * not audited (a flood would otherwise grow the log at wire speed); each checked failure is an
 * audit event ("session.fail"), the one record of what happened.
 *
 * Buckets an attempt is counted in (source: the client's address, http/sign-in.ts, which trusts
 * forwarded headers only from TIDE_TRUSTED_PROXIES, so a client cannot pick a new one per guess):
 * - "source:<address>": every account tried from one address (SOURCE_FREE_FAILURES, MAX_DELAY_S);
 * - "account-source:<address>|<email>": one account from one address (ACCOUNT_FREE_FAILURES,
 *   MAX_DELAY_S): a guesser at one account from one address;
 * - "account:<email>": one account from every address that is not known-good for it
 *   (ACCOUNT_FREE_FAILURES, ACCOUNT_MAX_DELAY_S): the bound on a guesser with many addresses.
 * A known-good source is one the account signed in from with its password in the last
 * KNOWN_SOURCE_DAYS (sign_in_known_sources). Attempts from it skip the account-wide bucket, so a
 * flood from other addresses, however many, cannot lock the owner out of a place they used
 * before; the two buckets they do count in hold only that address's own attempts. (Chosen over
 * "per-account counts only sources that never succeeded": the same thing, but a list written on
 * success is one indexed read per attempt rather than a scan of the account's history.) A
 * first sign-in from a new address during a flood still waits out the account's short cap.
 *
 * Backoff per bucket: the first `free` checks are free; after that each further one doubles the
 * wait, starting at BASE_DELAY_S, capped, counted from the bucket's newest check. The account's cap
 * is short on purpose: anyone who knows an email can fail its sign-ins from new addresses, and two
 * minutes still holds them to ~720 guesses a day per account from everywhere together, against
 * passwords the policy checked. A bucket is forgotten WINDOW_S after its newest check. A success
 * clears the account-source bucket, and the account bucket when it came from an address not yet
 * known (the owner's own typos from there); the source's count is not cleared (one good password
 * must not buy an address more guesses at other accounts), only given back its one check.
 */
export const ACCOUNT_FREE_FAILURES = 5;
/** Higher than per account: one office behind NAT may share an address. */
export const SOURCE_FREE_FAILURES = 20;
export const BASE_DELAY_S = 30;
export const MAX_DELAY_S = 15 * 60;
export const ACCOUNT_MAX_DELAY_S = 2 * 60;
export const WINDOW_S = 60 * 60;
/** Days an address stays known-good for an account after its last successful sign-in from there. */
export const KNOWN_SOURCE_DAYS = 30;
/** Bound on the reservation transaction, ms (three short statements; a held row lock fails sooner). */
const RESERVE_TIMEOUT_MS = 5_000;
/** How often one process deletes forgotten buckets and known sources, ms. */
const PRUNE_EVERY_MS = 60_000;

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

interface Bucket {
  key: string;
  free: number;
  max: number;
}

/** The buckets one attempt is counted in (see the file comment). */
export function signInBuckets(email: string, source: string | null, knownSource: boolean): Bucket[] {
  const buckets: Bucket[] = [];
  if (source) {
    buckets.push({ key: `source:${source}`, free: SOURCE_FREE_FAILURES, max: MAX_DELAY_S });
    // An address has no "|", so the first one ends it whatever the email holds.
    buckets.push({ key: `account-source:${source}|${email}`, free: ACCOUNT_FREE_FAILURES, max: MAX_DELAY_S });
  }
  if (!knownSource) {
    buckets.push({ key: `account:${email}`, free: ACCOUNT_FREE_FAILURES, max: ACCOUNT_MAX_DELAY_S });
  }
  // One lock order for every transaction: no two attempts wait on each other in a cycle.
  return buckets.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** A reserved password check: say how it ended (exactly one of these, once). */
export interface SignInAttempt {
  /** The password was right: give the count back, clear the account's, remember the address. */
  succeeded(): Promise<void>;
  /**
   * The check did not fail: give its count back. It never ran (the hashing queue was full, an
   * error), or the password was right but signs nobody in (a password change's current password,
   * account.service.ts, reserved as from an unknown address).
   */
  release(): Promise<void>;
}

interface BucketRow {
  key: string;
  failures: number;
  last_at: Date;
  now: Date;
  forgotten: boolean;
}

/** The buckets' rows ($1 keys), each with the database's clock and whether WINDOW_S ($2) has passed. */
const BUCKETS_SQL = `SELECT key, failures, last_at, now() AS now,
       last_at <= now() - make_interval(secs => $2) AS forgotten
  FROM sign_in_throttles WHERE key = ANY($1::text[])`;

/** Seconds until every one of `buckets` lets a check through (0: now), from their rows. */
function waitSeconds(rows: BucketRow[], buckets: Bucket[]): number {
  let wait = 0;
  for (const row of rows) {
    const bucket = buckets.find((b) => b.key === row.key);
    if (!bucket) continue;
    const failures = row.forgotten ? 0 : row.failures;
    wait = Math.max(wait, retryAfterSeconds(failures, row.last_at, bucket.free, row.now, bucket.max));
  }
  return wait;
}

function rateLimited(waitS: number): TideError {
  return new TideError("rate_limited", `Too many failed sign-ins; try again in ${waitS} s.`, {
    retryAfterS: waitS,
  });
}

async function isKnownSource(db: Db, email: string, source: string): Promise<boolean> {
  const rows = await db.$queryRawUnsafe<{ one: number }[]>(
    `SELECT 1 AS one FROM sign_in_known_sources
     WHERE email = $1 AND source = $2 AND last_success_at > now() - make_interval(days => $3)`,
    email,
    source,
    KNOWN_SOURCE_DAYS,
  );
  return rows.length > 0;
}

let lastPrune = 0;

/** Deletes forgotten buckets and stale known sources, at most once a PRUNE_EVERY_MS per process. */
async function pruneNowAndThen(db: Db): Promise<void> {
  if (Date.now() - lastPrune < PRUNE_EVERY_MS) return;
  lastPrune = Date.now();
  await db.$executeRawUnsafe(
    `DELETE FROM sign_in_throttles WHERE last_at < now() - make_interval(secs => $1)`,
    WINDOW_S,
  );
  await db.$executeRawUnsafe(
    `DELETE FROM sign_in_known_sources WHERE last_success_at < now() - make_interval(days => $1)`,
    KNOWN_SOURCE_DAYS,
  );
}

/**
 * Reserve one password check for `email` from `source`, or refuse (429 with retryAfterS) while
 * any of its buckets is backing off. Atomic: the bucket rows are locked while they are read and
 * raised, so parallel attempts see each other's counts.
 */
export async function reserveSignInAttempt(
  db: Db,
  email: string,
  source: string | null,
): Promise<SignInAttempt> {
  await pruneNowAndThen(db).catch((e: unknown) => console.error("sign-in throttle: prune failed:", e));
  const knownSource = source !== null && (await isKnownSource(db, email, source));
  const buckets = signInBuckets(email, source, knownSource);
  const keys = buckets.map((b) => b.key);
  // A look without locks first: during a flood nearly every attempt is refused here, in one
  // statement, instead of queueing (a pool connection held each) on the same locked rows.
  const seen = await db.$queryRawUnsafe<BucketRow[]>(BUCKETS_SQL, keys, WINDOW_S);
  const early = waitSeconds(seen, buckets);
  if (early > 0) throw rateLimited(early);
  const wait = await sqlTransaction(
    db,
    async (query) => {
      // Rows first (a new bucket has no row to lock), in lock order; then lock and read them.
      await query(
        `INSERT INTO sign_in_throttles (key, failures, last_at)
         SELECT k, 0, 'epoch' FROM unnest($1::text[]) WITH ORDINALITY AS u(k, i) ORDER BY i
         ON CONFLICT (key) DO NOTHING`,
        [keys],
      );
      const rows = await query<BucketRow>(`${BUCKETS_SQL} ORDER BY key FOR UPDATE`, [keys, WINDOW_S]);
      const waitS = waitSeconds(rows, buckets);
      if (waitS > 0) return waitS;
      await query(
        `UPDATE sign_in_throttles
         SET failures = CASE WHEN last_at <= now() - make_interval(secs => $2) THEN 1 ELSE failures + 1 END,
             last_at = now()
         WHERE key = ANY($1::text[])`,
        [keys, WINDOW_S],
      );
      return 0;
    },
    { timeoutMs: RESERVE_TIMEOUT_MS },
  );
  if (wait > 0) throw rateLimited(wait);

  let settled = false;
  const once = () => {
    if (settled) return false;
    settled = true;
    return true;
  };
  const giveBack = (which: string[]) =>
    db.$executeRawUnsafe(
      `UPDATE sign_in_throttles SET failures = greatest(failures - 1, 0) WHERE key = ANY($1::text[])`,
      which,
    );
  // Settling never fails the sign-in it settles: a count left behind only ages out.
  const settle = (what: string, work: () => Promise<unknown>) =>
    work().then(
      () => undefined,
      (e: unknown) => console.error(`sign-in throttle: ${what} failed:`, e),
    );
  return {
    succeeded: () =>
      settle("clearing after a success", async () => {
        if (!once()) return;
        const cleared = buckets.filter((b) => !b.key.startsWith("source:")).map((b) => b.key);
        await db.$executeRawUnsafe(`DELETE FROM sign_in_throttles WHERE key = ANY($1::text[])`, cleared);
        await giveBack(keys.filter((k) => !cleared.includes(k)));
        if (source) {
          await db.$executeRawUnsafe(
            `INSERT INTO sign_in_known_sources (email, source, last_success_at) VALUES ($1, $2, now())
             ON CONFLICT (email, source) DO UPDATE SET last_success_at = now()`,
            email,
            source,
          );
        }
      }),
    release: () =>
      settle("giving a check back", async () => {
        if (once()) await giveBack(keys);
      }),
  };
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
