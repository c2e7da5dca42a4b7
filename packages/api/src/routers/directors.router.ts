import {
  Director,
  DirectorDetail,
  DirectorIdInput,
  DirectorPoolInput,
  DirectorRemovalPreview,
  DirectorRemoved,
  RegisterDirectorInput,
  RemoveDirectorInput,
  UnassignDirectorInput,
  UnassignPreview,
} from "@tide/contracts";
import { z } from "zod";
import {
  assignPool,
  getDirector,
  registerDirector,
  removeDirector,
  unassignPool,
} from "../services/fleet/director.service";
import { previewDirectorRemoval, previewUnassign } from "../services/transitions/change-safety.service";
import { listDirectors } from "../services/fleet/fleet.service";
import { adminProcedure, readProcedure, router } from "../trpc";

export const directorsRouter = router({
  list: readProcedure
    .meta({ openapi: { method: "GET", path: "/directors", tags: ["directors"], summary: "List directors" } })
    .input(z.void())
    .output(z.array(Director))
    .query(({ ctx }) => listDirectors(ctx.db)),
  get: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/directors/{directorId}",
        tags: ["directors"],
        summary: "A director with the pools it serves",
      },
    })
    .input(DirectorIdInput)
    .output(DirectorDetail)
    .query(({ ctx, input }) => getDirector(ctx.db, input.directorId)),
  register: adminProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/directors",
        tags: ["directors"],
        summary: "Register a director by its agent's host name (409 with the existing id if taken)",
      },
    })
    .input(RegisterDirectorInput)
    .output(DirectorDetail)
    .mutation(({ ctx, input }) => registerDirector(ctx.db, ctx.actor, input)),
  assignPool: adminProcedure
    .meta({
      openapi: {
        method: "PUT",
        path: "/directors/{directorId}/pools/{poolId}",
        tags: ["directors"],
        summary:
          "Make a director serve a pool (idempotent; refused if binds overlap). Breaks no connection: " +
          "it serves the same table as the pool's other directors",
      },
    })
    .input(DirectorPoolInput)
    .output(DirectorDetail)
    .mutation(({ ctx, input }) => assignPool(ctx.db, ctx.actor, input)),
  unassignPool: adminProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/directors/{directorId}/pools/{poolId}",
        tags: ["directors"],
        summary:
          "Stop a director serving a pool. Nothing breaks while another director serves it; as its " +
          "last director, refused (422) without ?reason=… when the proxies report connections to its VIPs",
      },
    })
    .input(UnassignDirectorInput)
    .output(DirectorDetail)
    .mutation(({ ctx, input }) => unassignPool(ctx.db, ctx.actor, input)),
  previewUnassign: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/directors/{directorId}/pools/{poolId}/unassign/preview",
        tags: ["directors"],
        summary:
          "Whether unassigning a director from a pool breaks established connections (only as its last director)",
      },
    })
    .input(DirectorPoolInput)
    .output(UnassignPreview)
    .query(({ ctx, input }) => previewUnassign(ctx.db, input)),
  remove: adminProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/directors/{directorId}",
        tags: ["directors"],
        summary:
          "Remove a director (it stops serving its pools); refused (422) without ?reason=… when it is " +
          "the last director of a pool whose proxies report connections to its VIPs",
      },
    })
    .input(RemoveDirectorInput)
    .output(DirectorRemoved)
    .mutation(({ ctx, input }) => removeDirector(ctx.db, ctx.actor, input)),
  previewRemove: readProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/directors/{directorId}/remove/preview",
        tags: ["directors"],
        summary:
          "Whether removing a director breaks established connections (pools it is the last director of)",
      },
    })
    .input(DirectorIdInput)
    .output(DirectorRemovalPreview)
    .query(({ ctx, input }) => previewDirectorRemoval(ctx.db, input)),
});
