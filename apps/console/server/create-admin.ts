/**
 * `tide-console create-admin EMAIL`: the first admin of a real install (the seed, with its demo
 * fleet, is for development only). The password is generated and returned once; an existing
 * email is refused rather than touched. Audited as the system acting for this command.
 */
import { normalizeEmail } from "@tide/contracts";
import { createDb } from "@tide/db";
import { recordAudit } from "@tide/api/audit";
import { ensureUser } from "@tide/api/seed/users";
import { z } from "zod";

export const CREATE_ADMIN_ACTOR = "tide-console create-admin";

export class AdminExistsError extends Error {
  override name = "AdminExistsError";
}

export const AdminEmail = z.string().trim().email().describe("Email the admin signs in with");

export async function createAdmin(
  url: string,
  input: { email: string; name: string },
): Promise<{ id: string; email: string; password: string }> {
  const email = normalizeEmail(AdminEmail.parse(input.email));
  const db = createDb(url, { max: 2 });
  try {
    const user = await ensureUser(db, { email, name: input.name, role: "admin" });
    if (!user.created || !user.password) {
      throw new AdminExistsError(
        `a user with email ${email} exists; nothing was changed (reset its password in the console's Users page)`,
      );
    }
    await recordAudit(db, {
      actorKind: "system",
      actorId: null,
      actorLabel: CREATE_ADMIN_ACTOR,
      action: "user.create",
      targetType: "user",
      targetId: user.id,
      after: { email, name: input.name, role: "admin", disabled: false, passwordGenerated: true },
    });
    return { id: user.id, email, password: user.password };
  } finally {
    await db.$disconnect();
  }
}
