import { handleTrpcRequest } from "@tide/api";

/** The console's tRPC endpoint: authenticated before bodies are read, bodies and batches capped. */
export const dynamic = "force-dynamic";

function handler(req: Request): Promise<Response> {
  return handleTrpcRequest(req, {
    onError: ({ error, path }) => {
      if (error.code === "INTERNAL_SERVER_ERROR")
        console.error(`tRPC ${path ?? "?"} failed:`, error.cause ?? error);
    },
  });
}

export { handler as GET, handler as POST };
