import { TideError, type ChangePasswordInput, type ChangePasswordResult } from "@tide/contracts";
import type { Db } from "@tide/db";
import { recordAudit } from "../services/audit/audit.service";
import { actorRef, type Actor } from "./actor";
import { passwordProblem } from "./password-policy";
import { hashPassword, SIGN_IN_QUEUE_LIMIT, verifyPassword } from "./secrets";
import { recordSignInFailure, reserveSignInAttempt } from "./sign-in-throttle";

/**
 * Change the signed-in user's own password. The current password is checked like a sign-in
 * (same throttle, failures audited) so a stolen session cannot guess it faster than the sign-in
 * page could. Every other session of the user ends; the one making the change stays signed in.
 */
export async function changeOwnPassword(
  db: Db,
  actor: Actor,
  input: ChangePasswordInput,
): Promise<ChangePasswordResult> {
  const user = await db.user.findUnique({
    where: { id: actor.userId },
    select: { id: true, email: true, passwordHash: true, disabledAt: true },
  });
  if (!user || user.disabledAt) throw new TideError("unauthorized", "Not signed in.");
  const attempt = await reserveSignInAttempt(db, user.email, null);
  const ok = await verifyPassword(input.currentPassword, user.passwordHash, {
    queueLimit: SIGN_IN_QUEUE_LIMIT,
  });
  if (!ok) {
    await recordSignInFailure(db, { email: user.email, source: null, reason: "change_password" });
    const message = "The current password is incorrect.";
    throw new TideError("bad_request", message, { fields: { currentPassword: message } });
  }
  await attempt.release(); // a right current password is no failure: its count is given back
  const problem =
    input.newPassword === input.currentPassword
      ? "The new password is the current one."
      : passwordProblem(input.newPassword, user.email);
  if (problem) throw new TideError("bad_request", problem, { fields: { newPassword: problem } });

  const passwordHash = await hashPassword(input.newPassword);
  return db.$transaction(async (tx) => {
    await tx.user.update({ where: { id: user.id }, data: { passwordHash } });
    const keep = actor.sessionId ?? null;
    const sessions = await tx.session.deleteMany({
      where: { userId: user.id, ...(keep ? { id: { not: keep } } : {}) },
    });
    await recordAudit(tx, {
      ...actorRef(actor),
      action: "user.change_password",
      targetType: "user",
      targetId: user.id,
      after: { sessionsEnded: sessions.count },
    });
    return { sessionsEnded: sessions.count };
  });
}
