import { z } from "zod";

export const Role = z.enum(["viewer", "operator", "admin"]).describe("User role");
export type Role = z.infer<typeof Role>;

export const Scope = z
  .enum(["read", "operate", "admin"])
  .describe("read: view everything; operate: drain/fill/health; admin: fleet changes, tokens, users");
export type Scope = z.infer<typeof Scope>;

export const roleScopes: Record<Role, readonly Scope[]> = {
  viewer: ["read"],
  operator: ["read", "operate"],
  admin: ["read", "operate", "admin"],
};

export const ApiTokenSummary = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string().describe("First characters of the token, to recognise it"),
    scopes: z.array(Scope),
    createdBy: z.string().describe("Email of the user who created it"),
    createdAt: z.string().datetime(),
    expiresAt: z.string().datetime().nullable(),
    lastUsedAt: z.string().datetime().nullable(),
    revokedAt: z.string().datetime().nullable(),
  })
  .describe("An API token, without its secret");
export type ApiTokenSummary = z.infer<typeof ApiTokenSummary>;

/**
 * The one form of an email address Tide stores, looks up and signs in with: trimmed, lower case.
 * Every path that creates, finds or signs in a user goes through this (seed, users, sessions).
 */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export const Me = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  role: Role,
  scopes: z.array(Scope),
  via: z.enum(["session", "token"]),
});
export type Me = z.infer<typeof Me>;

export const ChangePasswordInput = z
  .object({
    currentPassword: z.string().min(1).max(1024).describe("The password the user signs in with now"),
    // Length and the rest of the policy are checked by the API (password-policy.ts), which says why.
    newPassword: z
      .string()
      .min(1)
      .max(200)
      .describe("The new password: at least 12 characters, not common or trivial, not your email"),
  })
  .describe("Change your own password");
export type ChangePasswordInput = z.infer<typeof ChangePasswordInput>;

export const ChangePasswordResult = z
  .object({
    sessionsEnded: z
      .number()
      .int()
      .describe("Your other sessions that were signed out (the one making this change stays)"),
  })
  .describe("The password was changed");
export type ChangePasswordResult = z.infer<typeof ChangePasswordResult>;
