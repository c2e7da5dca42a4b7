import { newId, normalizeEmail, roleScopes, TideError, unsafeTextReason } from "@tide/contracts";
import type { Db } from "@tide/db";
import { recordAudit } from "../services/audit/audit.service";
import type { Actor } from "./actor";
import { digestSecret, randomSecret, SIGN_IN_QUEUE_LIMIT, verifyPassword } from "./secrets";
import { recordSignInFailure, reserveSignInAttempt } from "./sign-in-throttle";

export const SESSION_COOKIE = "tide_session";

/** A fixed hash to verify against when the user does not exist, so timing does not reveal emails. */
const DUMMY_HASH = "scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

/**
 * Sign in with email and password. Refused with 429 (retryAfterS) while the account or the source
 * address is backing off after failures (sign-in-throttle.ts: the check is reserved there before
 * it runs, so parallel guesses cannot share one count), or when too many password checks are
 * already queued; each wrong password is audited with the attempted email as the actor.
 * `source` is the client's address as the console sees it (null when unknown).
 */
export async function signIn(
  db: Db,
  input: { email: string; password: string; sessionHours: number; source?: string | null | undefined },
): Promise<{ cookieValue: string; expiresAt: Date; user: { id: string; email: string; role: string } }> {
  const email = normalizeEmail(input.email);
  if ([...email].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f)) {
    throw new TideError("bad_request", "An email address has no control characters.");
  }
  // A lone UTF-16 surrogate ("\ud800" in JSON) is no text PostgreSQL can hold: the lookups below
  // would fail as a 500 (issue 27 item 8).
  const unsafe = unsafeTextReason(email);
  if (unsafe) throw new TideError("bad_request", `An email address ${unsafe}.`);
  const source = input.source ?? null;
  const attempt = await reserveSignInAttempt(db, email, source);
  const { user, ok } = await db.user
    .findUnique({
      where: { email },
      select: { id: true, email: true, name: true, role: true, passwordHash: true, disabledAt: true },
    })
    .then(async (user) => ({
      user,
      ok: await verifyPassword(input.password, user?.passwordHash ?? DUMMY_HASH, {
        queueLimit: SIGN_IN_QUEUE_LIMIT,
      }),
    }))
    .catch(async (e: unknown) => {
      await attempt.release(); // not checked (the hashing queue was full): not a failure
      throw e;
    });
  if (!user || !ok || user.disabledAt) {
    const reason = !user ? "unknown_email" : !ok ? "wrong_password" : "disabled";
    await recordSignInFailure(db, { email, source, reason });
    throw new TideError("unauthorized", "Email or password is incorrect.");
  }
  const cookieValue = randomSecret();
  const expiresAt = new Date(Date.now() + input.sessionHours * 3600_000);
  await db.session.create({
    data: { id: newId("session"), tokenHash: digestSecret(cookieValue), userId: user.id, expiresAt },
  });
  await recordAudit(db, {
    actorKind: "user",
    actorId: user.id,
    actorLabel: user.email,
    action: "session.create",
    targetType: "user",
    targetId: user.id,
  });
  await attempt.succeeded();
  return { cookieValue, expiresAt, user: { id: user.id, email: user.email, role: user.role } };
}

export async function signOut(db: Db, cookieValue: string): Promise<void> {
  await db.session.deleteMany({ where: { tokenHash: digestSecret(cookieValue) } });
}

export async function actorFromSession(db: Db, cookieValue: string): Promise<Actor | null> {
  const session = await db.session.findUnique({
    where: { tokenHash: digestSecret(cookieValue) },
    select: {
      id: true,
      expiresAt: true,
      user: { select: { id: true, email: true, name: true, role: true, disabledAt: true } },
    },
  });
  if (!session || session.expiresAt <= new Date() || session.user.disabledAt) return null;
  const { user } = session;
  return {
    kind: "user",
    userId: user.id,
    email: user.email,
    name: user.name,
    role: user.role,
    tokenId: null,
    label: user.email,
    scopes: roleScopes[user.role],
    sessionId: session.id,
  };
}
