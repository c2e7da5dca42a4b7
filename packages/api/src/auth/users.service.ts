import { newId, normalizeEmail, roleScopes, TideError, type Role, type UserSummary } from "@tide/contracts";
import { Prisma, type Db } from "@tide/db";
import { apiTokenCacheFor } from "./tokens.service";
import { recordAudit } from "../services/audit/audit.service";
import { actorRef, type Actor } from "./actor";
import { passwordProblem } from "./password-policy";
import { generatePassword, hashPassword } from "./secrets";

type Tx = Prisma.TransactionClient;

/** Never the password hash: it stays in the auth layer (sessions.ts reads it to sign in). */
const userSelect = {
  id: true,
  email: true,
  name: true,
  role: true,
  createdAt: true,
  disabledAt: true,
} satisfies Prisma.UserSelect;

type UserRow = Prisma.UserGetPayload<{ select: typeof userSelect }>;

function toSummary(u: UserRow): UserSummary {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    role: u.role,
    createdAt: u.createdAt.toISOString(),
    disabledAt: u.disabledAt?.toISOString() ?? null,
  };
}

const auditView = (u: UserRow) => ({
  email: u.email,
  name: u.name,
  role: u.role,
  disabled: u.disabledAt !== null,
});

export async function listUsers(db: Db): Promise<UserSummary[]> {
  const rows = await db.user.findMany({ select: userSelect, orderBy: { email: "asc" } });
  return rows.map(toSummary);
}

async function userOrThrow(tx: Tx | Db, userId: string): Promise<UserRow> {
  const u = await tx.user.findUnique({ where: { id: userId }, select: userSelect });
  if (!u) throw new TideError("not_found", `User ${userId} does not exist.`);
  return u;
}

/**
 * Lock every enabled admin row (FOR UPDATE, id order) before a change that could leave none, so
 * two admins demoting or disabling each other at once cannot both succeed: the second waits, then
 * counts the first one's result.
 */
async function lockEnabledAdmins(tx: Tx): Promise<string[]> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT id FROM users WHERE role = 'admin' AND disabled_at IS NULL ORDER BY id FOR UPDATE`;
  return rows.map((r) => r.id);
}

/** Refuse when `user` is the last enabled admin and the change would take that away. */
async function keepAnAdmin(tx: Tx, user: UserRow, what: string): Promise<void> {
  const admins = await lockEnabledAdmins(tx);
  if (admins.length === 1 && admins[0] === user.id) {
    throw new TideError(
      "conflict",
      `${user.email} is the last enabled admin; ${what} would leave nobody able to manage users and tokens. ` +
        "Make another user admin first.",
      { reason: "last_admin" },
    );
  }
}

/**
 * A caller grants no more than it holds (issue 27 item 8): making a user of `role`, or setting a
 * password that lets the caller sign in as one, hands over that role's scopes. A session of an
 * admin holds every scope; an API token holds only the scopes it was made with, so an admin-only
 * token may not make a user who can read and operate. `from`: the user's role now, whose scopes
 * they already hold (a change of role grants only the difference; a demotion grants nothing).
 */
function refuseGrantBeyondCaller(actor: Actor, role: Role, what: string, from: Role | null = null): void {
  const granted = roleScopes[role].filter((s) => from === null || !roleScopes[from].includes(s));
  const missing = granted.filter((s) => !actor.scopes.includes(s));
  if (missing.length === 0) return;
  const caller = actor.kind === "token" ? "this token holds" : "you hold";
  const holds = actor.scopes.length > 0 ? actor.scopes.join(", ") : "no scopes";
  throw new TideError(
    "forbidden",
    `You cannot ${what}: ${/^[aeiou]/.test(role) ? "an" : "a"} ${role} holds ${roleScopes[role].join(", ")} and ${caller} only ${holds} ` +
      `(missing: ${missing.join(", ")}). ` +
      "A caller can grant no more than it holds; use a session or a token with those scopes.",
    { missing, role },
  );
}

/** The password to store: the caller's (checked against the policy) or a generated one (returned once). */
function choosePassword(
  password: string | undefined,
  email: string,
): { password: string; generated: string | null } {
  if (password === undefined) {
    const generated = generatePassword();
    return { password: generated, generated };
  }
  const problem = passwordProblem(password, email);
  if (problem) throw new TideError("bad_request", problem, { fields: { password: problem } });
  return { password, generated: null };
}

/** Create a user; a password is generated when none is given and returned only in this reply. */
export async function createUser(
  db: Db,
  actor: Actor,
  input: { email: string; name: string; role: Role; password?: string | undefined },
): Promise<{ user: UserSummary; password: string | null }> {
  const email = normalizeEmail(input.email);
  refuseGrantBeyondCaller(actor, input.role, `create a user with role ${input.role}`);
  const { password, generated } = choosePassword(input.password, email);
  const passwordHash = await hashPassword(password);
  try {
    const user = await db.$transaction(async (tx) => {
      const row = await tx.user.create({
        data: { id: newId("user"), email, name: input.name.trim(), role: input.role, passwordHash },
        select: userSelect,
      });
      await recordAudit(tx, {
        ...actorRef(actor),
        action: "user.create",
        targetType: "user",
        targetId: row.id,
        after: { ...auditView(row), passwordGenerated: generated !== null },
      });
      return row;
    });
    return { user: toSummary(user), password: generated };
  } catch (e) {
    if (e instanceof Prisma.PrismaClientKnownRequestError && e.code === "P2002") {
      const message = `A user with email ${email} already exists.`;
      throw new TideError("conflict", message, { fields: { email: message } });
    }
    throw e;
  }
}

/** Rename a user or change their role. The last enabled admin cannot be demoted. */
export async function updateUser(
  db: Db,
  actor: Actor,
  input: { userId: string; name?: string | undefined; role?: Role | undefined },
): Promise<UserSummary> {
  const summary = await db.$transaction(async (tx) => {
    const before = await userOrThrow(tx, input.userId);
    if (input.role !== undefined) {
      refuseGrantBeyondCaller(actor, input.role, `make ${before.email} ${input.role}`, before.role);
    }
    if (input.role !== undefined && input.role !== "admin" && before.role === "admin") {
      await keepAnAdmin(tx, before, `making them ${input.role}`);
    }
    const after = await tx.user.update({
      where: { id: input.userId },
      data: { name: input.name?.trim() ?? before.name, role: input.role ?? before.role },
      select: userSelect,
    });
    await recordAudit(tx, {
      ...actorRef(actor),
      action: "user.update",
      targetType: "user",
      targetId: after.id,
      before: auditView(before),
      after: auditView(after),
    });
    return toSummary(after);
  });
  // Its tokens act with the new role (or not at all) in this process from now on; other
  // consoles hear it from the database (migration auth_notify).
  apiTokenCacheFor(db).evict("user", input.userId);
  return summary;
}

/**
 * Disable a user: sign-in is refused, their sessions end now, and their API tokens stop working
 * (tokens.service refuses tokens of disabled users). The last enabled admin cannot be disabled.
 */
export async function disableUser(db: Db, actor: Actor, userId: string): Promise<UserSummary> {
  const summary = await db.$transaction(async (tx) => {
    const before = await userOrThrow(tx, userId);
    if (before.disabledAt) {
      throw new TideError(
        "conflict",
        `${before.email} is already disabled (since ${before.disabledAt.toISOString()}).`,
      );
    }
    if (before.role === "admin") await keepAnAdmin(tx, before, "disabling them");
    const after = await tx.user.update({
      where: { id: userId },
      data: { disabledAt: new Date() },
      select: userSelect,
    });
    const sessions = await tx.session.deleteMany({ where: { userId } });
    await recordAudit(tx, {
      ...actorRef(actor),
      action: "user.disable",
      targetType: "user",
      targetId: userId,
      before: auditView(before),
      after: { ...auditView(after), sessionsEnded: sessions.count },
    });
    return toSummary(after);
  });
  // Its tokens act with the new role (or not at all) in this process from now on; other
  // consoles hear it from the database (migration auth_notify).
  apiTokenCacheFor(db).evict("user", userId);
  return summary;
}

/** Enable a disabled user again (their unrevoked tokens work again). */
export async function enableUser(db: Db, actor: Actor, userId: string): Promise<UserSummary> {
  const summary = await db.$transaction(async (tx) => {
    const before = await userOrThrow(tx, userId);
    if (!before.disabledAt) throw new TideError("conflict", `${before.email} is not disabled.`);
    const after = await tx.user.update({
      where: { id: userId },
      data: { disabledAt: null },
      select: userSelect,
    });
    await recordAudit(tx, {
      ...actorRef(actor),
      action: "user.enable",
      targetType: "user",
      targetId: userId,
      before: auditView(before),
      after: auditView(after),
    });
    return toSummary(after);
  });
  // Its tokens act with the new role (or not at all) in this process from now on; other
  // consoles hear it from the database (migration auth_notify).
  apiTokenCacheFor(db).evict("user", userId);
  return summary;
}

/** Set a new password (generated when none is given, returned only here) and end the user's sessions. */
export async function resetPassword(
  db: Db,
  actor: Actor,
  input: { userId: string; password?: string | undefined },
): Promise<{ user: UserSummary; password: string | null }> {
  const target = await userOrThrow(db, input.userId);
  // Whoever sets the password can sign in as the user, with the user's role.
  refuseGrantBeyondCaller(actor, target.role, `set the password of ${target.email}`);
  const { password, generated } = choosePassword(input.password, target.email);
  const passwordHash = await hashPassword(password);
  return db.$transaction(async (tx) => {
    const user = await userOrThrow(tx, input.userId);
    await tx.user.update({ where: { id: user.id }, data: { passwordHash } });
    const sessions = await tx.session.deleteMany({ where: { userId: user.id } });
    await recordAudit(tx, {
      ...actorRef(actor),
      action: "user.reset_password",
      targetType: "user",
      targetId: user.id,
      after: { passwordGenerated: generated !== null, sessionsEnded: sessions.count },
    });
    return { user: toSummary(user), password: generated };
  });
}
