import {
  EnrollIn,
  EnrollmentTokenCreated,
  EnrollmentTokenCreateIn,
  EnrollmentTokenId,
  EnrollmentTokenSummary,
  EnrollOut,
  HostId,
} from "@tide/contracts";
import { z } from "zod";
import {
  consoleUrlFor,
  createEnrollmentToken,
  listEnrollmentTokens,
  redeemEnrollmentToken,
  revokeEnrollmentToken,
} from "../auth/enrollment-tokens.service";
import { adminProcedure, publicProcedure, router } from "../trpc";

/** Admins make, list and revoke enrollment tokens (contracts/enrollment.ts). */
export const enrollmentTokensRouter = router({
  list: adminProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/enrollment-tokens",
        tags: ["hosts"],
        summary: "List enrollment tokens, newest first, with their state (never their secrets)",
      },
    })
    .input(z.object({ hostname: HostId.optional() }))
    .output(z.array(EnrollmentTokenSummary))
    .query(({ ctx, input }) => listEnrollmentTokens(ctx.db, input)),
  create: adminProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/enrollment-tokens",
        tags: ["hosts"],
        summary:
          "Make a one-time enrollment token for a new host (shown once) with the command to run on the host",
      },
    })
    .input(EnrollmentTokenCreateIn)
    .output(EnrollmentTokenCreated)
    .mutation(({ ctx, input }) => createEnrollmentToken(ctx.db, ctx.actor, input, consoleUrlFor(ctx.origin))),
  revoke: adminProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/enrollment-tokens/{tokenId}",
        tags: ["hosts"],
        summary: "Revoke a pending enrollment token",
      },
    })
    .input(z.object({ tokenId: EnrollmentTokenId }))
    .output(EnrollmentTokenSummary)
    .mutation(({ ctx, input }) => revokeEnrollmentToken(ctx.db, ctx.actor, input.tokenId)),
});

/**
 * A new host's one call before it has a host token: the enrollment token in the body is the
 * credential, so no user or host authentication (the REST handler reads this route's body, capped
 * at a few KiB, without one: http/limits.ts ANONYMOUS_BODY_PATHS).
 */
export const enrollRouter = router({
  redeem: publicProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/enroll",
        tags: ["agent"],
        protect: false,
        summary:
          "Trade an enrollment token (tide_enroll_…) for the host's own host token; single use. No Authorization header: the token in the body is the credential",
      },
    })
    .input(EnrollIn)
    .output(EnrollOut)
    .mutation(({ ctx, input }) => redeemEnrollmentToken(ctx.db, input)),
});
