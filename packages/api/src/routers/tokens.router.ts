import { safeText } from "@tide/contracts";
import { ApiTokenSummary, Scope, TokenId } from "@tide/contracts";
import { z } from "zod";
import { createToken, listTokens, revokeToken } from "../auth/tokens.service";
import { adminProcedure, router } from "../trpc";

export const tokensRouter = router({
  list: adminProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/tokens",
        tags: ["tokens"],
        summary: "List API tokens (never their secrets)",
      },
    })
    .input(z.void())
    .output(z.array(ApiTokenSummary))
    .query(({ ctx }) => listTokens(ctx.db)),
  create: adminProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/tokens",
        tags: ["tokens"],
        summary: "Create an API token (shown once)",
      },
    })
    .input(
      z.object({
        name: safeText().trim().min(1).max(80),
        scopes: z.array(Scope).min(1),
        expiresInDays: z.number().int().min(1).max(3650).optional(),
      }),
    )
    .output(z.object({ token: z.string().describe("The secret, shown only now"), summary: ApiTokenSummary }))
    .mutation(({ ctx, input }) => createToken(ctx.db, ctx.actor, input)),
  revoke: adminProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/tokens/{tokenId}/revoke",
        tags: ["tokens"],
        summary: "Revoke an API token",
      },
    })
    .input(z.object({ tokenId: TokenId }))
    .output(ApiTokenSummary)
    .mutation(({ ctx, input }) => revokeToken(ctx.db, ctx.actor, input.tokenId)),
});
