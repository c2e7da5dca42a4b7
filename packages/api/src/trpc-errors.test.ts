import type { Db } from "@tide/db";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { publicProcedure, router } from "./trpc";

/**
 * The error formatter as callers see it over HTTP: a caller's bad input names the fields; a reply
 * that fails its own output contract is an internal error whose validator text stays in the log.
 */
const testRouter = router({
  echo: publicProcedure.input(z.object({ n: z.number().int() })).query(({ input }) => input.n),
  broken: publicProcedure
    .output(z.object({ rate: z.number() }))
    // What a stored Infinity (null in JSON) did to GET /findings before issue 11.
    .query(() => ({ rate: null as unknown as number })),
});

async function call(path: string, input: unknown) {
  const query = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
  const url = `http://console.test/api/trpc/${path}${query}`;
  const res = await fetchRequestHandler({
    endpoint: "/api/trpc",
    router: testRouter,
    req: new Request(url),
    createContext: () => ({ db: {} as Db, actor: null }),
    onError: () => undefined,
  });
  return {
    status: res.status,
    body: (await res.json()) as { error: { message: string; data: Record<string, unknown> } },
  };
}

describe("tRPC error formatter", () => {
  it("answers bad input with 400 and the field at fault", async () => {
    const r = await call("echo", { n: "seven" });
    expect(r.status).toBe(400);
    expect(r.body.error.data.tideCode).toBe("bad_request");
    expect(r.body.error.data.details).toEqual({ fields: { n: expect.any(String) } });
  });

  it("answers a reply that fails its own contract with 500 and no validator text", async () => {
    const spy = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const r = await call("broken", undefined);
      expect(r.status).toBe(500);
      expect(r.body.error.data.tideCode).toBe("internal");
      expect(r.body.error.message).toBe("Internal error; see the console's log.");
      expect(JSON.stringify(r.body)).not.toMatch(/rate|expected number|Invalid input/);
    } finally {
      spy.mockRestore();
    }
  });
});
