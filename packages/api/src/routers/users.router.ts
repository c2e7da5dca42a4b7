import {
  CreateUserInput,
  ResetPasswordInput,
  UpdateUserInput,
  UserIdInput,
  UserSummary,
  UserWithPassword,
} from "@tide/contracts";
import { z } from "zod";
import {
  createUser,
  disableUser,
  enableUser,
  listUsers,
  resetPassword,
  updateUser,
} from "../auth/users.service";
import { adminProcedure, router } from "../trpc";

export const usersRouter = router({
  list: adminProcedure
    .meta({ openapi: { method: "GET", path: "/users", tags: ["users"], summary: "List users" } })
    .input(z.void())
    .output(z.array(UserSummary))
    .query(({ ctx }) => listUsers(ctx.db)),
  create: adminProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/users",
        tags: ["users"],
        summary: "Create a user (a generated password is shown once)",
      },
    })
    .input(CreateUserInput)
    .output(UserWithPassword)
    .mutation(({ ctx, input }) => createUser(ctx.db, ctx.actor, input)),
  update: adminProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: "/users/{userId}",
        tags: ["users"],
        summary: "Rename a user or change their role (the last admin stays admin)",
      },
    })
    .input(UpdateUserInput)
    .output(UserSummary)
    .mutation(({ ctx, input }) => updateUser(ctx.db, ctx.actor, input)),
  disable: adminProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/users/{userId}/disable",
        tags: ["users"],
        summary: "Disable a user: ends their sessions, their API tokens stop working",
      },
    })
    .input(UserIdInput)
    .output(UserSummary)
    .mutation(({ ctx, input }) => disableUser(ctx.db, ctx.actor, input.userId)),
  enable: adminProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/users/{userId}/enable",
        tags: ["users"],
        summary: "Enable a disabled user",
      },
    })
    .input(UserIdInput)
    .output(UserSummary)
    .mutation(({ ctx, input }) => enableUser(ctx.db, ctx.actor, input.userId)),
  resetPassword: adminProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/users/{userId}/reset-password",
        tags: ["users"],
        summary: "Set a new password (generated and shown once when omitted); ends their sessions",
      },
    })
    .input(ResetPasswordInput)
    .output(UserWithPassword)
    .mutation(({ ctx, input }) => resetPassword(ctx.db, ctx.actor, input)),
});
