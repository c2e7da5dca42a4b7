import { z } from "zod";
import { Role } from "./auth";
import { UserId } from "./ids";

/** Minimum length of a password set by an admin (the generated ones are 24 characters). */
export const MIN_PASSWORD_LENGTH = 12;

export const Password = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(200)
  .describe(`Password, at least ${MIN_PASSWORD_LENGTH} characters; omit to have one generated`);

export const UserSummary = z
  .object({
    id: UserId,
    email: z.string().describe("Sign-in email (lower case, unique)"),
    name: z.string().describe("Display name"),
    role: Role,
    createdAt: z.string().datetime().describe("When the user was created (ISO 8601)"),
    disabledAt: z
      .string()
      .datetime()
      .nullable()
      .describe("When the user was disabled (ISO 8601); null while enabled"),
  })
  .describe("A console user, never with a password hash");
export type UserSummary = z.infer<typeof UserSummary>;

export const CreateUserInput = z
  .object({
    email: z.string().trim().toLowerCase().email().max(254).describe("Sign-in email"),
    name: z.string().trim().min(1).max(80).describe("Display name"),
    role: Role,
    password: Password.optional(),
  })
  .describe("A new user; a password is generated and shown once when none is given");

export const UpdateUserInput = z
  .object({
    userId: UserId,
    name: z.string().trim().min(1).max(80).optional().describe("Display name"),
    role: Role.optional(),
  })
  .describe("Rename a user or change their role");

export const UserIdInput = z.object({ userId: UserId });

export const ResetPasswordInput = z
  .object({ userId: UserId, password: Password.optional() })
  .describe("Set a new password (generated when omitted); ends the user's sessions");

export const UserWithPassword = z
  .object({
    user: UserSummary,
    password: z
      .string()
      .nullable()
      .describe("The generated password, shown only in this reply; null when the caller chose it"),
  })
  .describe("A user and the password generated for them (shown once)");
