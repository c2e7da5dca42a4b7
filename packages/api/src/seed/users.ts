import { newId, normalizeEmail, TideError, type Role } from "@tide/contracts";
import type { Db } from "@tide/db";
import { passwordProblem } from "../auth/password-policy";
import { generatePassword, hashPassword } from "../auth/secrets";

/**
 * Create a user if missing. Returns the password only when it was set now (it is stored hashed
 * and can never be read back). The email is stored normalised (trimmed, lower case) as sign-in
 * looks it up; a user an older seed stored with capitals is found and its email normalised.
 * A chosen password meets the password policy, as everywhere else (a generated one does).
 */
export async function ensureUser(
  db: Db,
  input: { email: string; name: string; role: Role; password?: string | undefined },
): Promise<{ id: string; created: boolean; password: string | null }> {
  const email = normalizeEmail(input.email);
  if (input.password !== undefined) {
    const problem = passwordProblem(input.password, email);
    if (problem) {
      throw new TideError("bad_request", `The password chosen for ${email} is refused: ${problem}`, {
        fields: { password: problem },
      });
    }
  }
  const existing = await db.user.findFirst({
    where: { email: { equals: email, mode: "insensitive" } },
    select: { id: true, email: true },
    orderBy: { createdAt: "asc" },
  });
  if (existing) {
    if (existing.email !== email) {
      await db.user.update({ where: { id: existing.id }, data: { email } });
    }
    return { id: existing.id, created: false, password: null };
  }
  const password = input.password ?? generatePassword();
  const user = await db.user.create({
    data: {
      id: newId("user"),
      email,
      name: input.name,
      role: input.role,
      passwordHash: await hashPassword(password),
    },
    select: { id: true },
  });
  return { id: user.id, created: true, password };
}
