import "server-only";

import type { Me } from "@tide/contracts";
import { TRPCError } from "@trpc/server";
import { redirect } from "next/navigation";
import { cache } from "react";
import { serverCaller } from "~/trpc/server";

/** The signed-in user for this request, or a redirect to /sign-in (expired or revoked session). */
export const requireUser = cache(async (): Promise<Me> => {
  let me: Me | null = null;
  try {
    me = await (await serverCaller()).auth.me();
  } catch (e) {
    if (!(e instanceof TRPCError && e.code === "UNAUTHORIZED")) throw e;
  }
  if (!me) redirect("/sign-in");
  return me;
});

/** The signed-in user for this request, or null (pages that also serve visitors: the 404). */
export const currentUser = cache(async (): Promise<Me | null> => {
  try {
    return await (await serverCaller()).auth.me();
  } catch (e) {
    if (e instanceof TRPCError && e.code === "UNAUTHORIZED") return null;
    throw e;
  }
});
