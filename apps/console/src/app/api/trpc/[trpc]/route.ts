import { trpcRequest } from "~/api-handlers";

/**
 * The console's tRPC endpoint: authenticated before bodies are read, bodies and batches capped.
 * `tide-console serve` answers it without Next's router (server/api-direct.ts); this route serves
 * `next dev` and `next start`.
 */
export const dynamic = "force-dynamic";

export { trpcRequest as GET, trpcRequest as POST };
