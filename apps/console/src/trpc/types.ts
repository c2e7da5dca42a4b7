import type { AppRouter } from "@tide/api";
import type { inferRouterInputs, inferRouterOutputs } from "@trpc/server";

/** What each procedure returns and takes, as the browser sees it (JSON). */
export type RouterOutputs = inferRouterOutputs<AppRouter>;
export type RouterInputs = inferRouterInputs<AppRouter>;
