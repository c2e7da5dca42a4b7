import { newId, type Role } from "@tide/contracts";
import type { Db } from "@tide/db";
import { generatePassword, hashPassword } from "../auth/secrets";

/**
 * Create a user if missing. Returns the password only when it was set now (it is stored hashed
 * and can never be read back).
 */
export async function ensureUser(
  db: Db,
  input: { email: string; name: string; role: Role; password?: string | undefined },
): Promise<{ id: string; created: boolean; password: string | null }> {
  const existing = await db.user.findUnique({ where: { email: input.email }, select: { id: true } });
  if (existing) return { id: existing.id, created: false, password: null };
  const password = input.password ?? generatePassword();
  const user = await db.user.create({
    data: {
      id: newId("user"),
      email: input.email,
      name: input.name,
      role: input.role,
      passwordHash: await hashPassword(password),
    },
    select: { id: true },
  });
  return { id: user.id, created: true, password };
}
