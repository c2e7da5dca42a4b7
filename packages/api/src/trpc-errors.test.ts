import type { Db } from "@tide/db";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { fieldInWords } from "@tide/contracts";
import { issueInWords, publicProcedure, router, zodMessage } from "./trpc";

/**
 * The error formatter as callers see it over HTTP: a caller's bad input names the fields; a reply
 * that fails its own output contract is an internal error whose validator text stays in the log.
 */
const testRouter = router({
  echo: publicProcedure.input(z.object({ n: z.number().int() })).query(({ input }) => input.n),
  // The shape of PUT /hosts/{id}/pmtu-targets: a list of objects holding a list of numbers.
  targets: publicProcedure
    .input(
      z.object({
        targets: z
          .array(
            z.object({
              target: z.string().regex(/^[a-z0-9]/, "must be an IP address or a host name"),
              sizes: z.array(z.int().min(68).max(9000)).max(8),
            }),
          )
          .max(32),
      }),
    )
    .query(() => "ok"),
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

  it("says what is wrong with bad input in sentences naming the field, never zod's rendering", async () => {
    const r = await call("targets", {
      targets: [
        { target: "10.30.0.2", sizes: [null] },
        { target: "-oops", sizes: [20, 1472] },
      ],
    });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toBe(
      "Invalid input: targets entry 1, sizes entry 1 — must be a number, not null. " +
        "targets entry 2, target — must be an IP address or a host name. " +
        "targets entry 2, sizes entry 1 — must be at least 68.",
    );
    expect(r.body.error.message).not.toMatch(/✖|→|\[0\]|expected|received/);
    // Field keys stay the paths forms match their inputs by; their messages are plain too.
    expect(r.body.error.data.details).toEqual({
      fields: {
        "targets[0].sizes[0]": "must be a number, not null",
        "targets[1].target": "must be an IP address or a host name",
        "targets[1].sizes[0]": "must be at least 68",
      },
    });
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

describe("zod issues in words", () => {
  const issues = (schema: z.ZodType, input: unknown) => schema.safeParse(input).error!.issues;

  it("names a path in words, counting entries from 1", () => {
    expect(fieldInWords(["targets", 0, "sizes", 1])).toBe("targets entry 1, sizes entry 2");
    expect(fieldInWords(["binds", 1, "address"])).toBe("binds entry 2, address");
    expect(fieldInWords([3])).toBe("entry 4");
    expect(fieldInWords([])).toBe("the input");
  });

  it.each([
    [z.object({ n: z.number() }), {}, "is missing"],
    [z.string(), 7, "must be text, not a number"],
    [z.int(), 1.5, "must be a whole number"],
    [z.int().max(9000), 9001, "must be at most 9000"],
    [z.number().gt(0), 0, "must be above 0"],
    [z.string().min(1), "", "must not be empty"],
    [z.string().max(3), "abcd", "must have at most 3 characters"],
    [z.array(z.int()).max(1), [1, 2], "must have at most 1 entry"],
    [z.array(z.int()).min(2), [1], "must have at least 2 entries"],
    [z.enum(["read", "operate"]), "root", "must be one of read, operate"],
    [z.strictObject({}), { extra: 1 }, "has a field it does not know: extra"],
    [z.email(), "nobody", "must be a valid email"],
    [z.string().refine(() => false, "each target only once"), "x", "each target only once"],
  ])("%# says a rule in words", (schema, input, words) => {
    const [issue] = issues(schema, input);
    expect(issueInWords(issue!)).toBe(words);
  });

  it("gives one sentence per field", () => {
    const schema = z.object({ port: z.int().min(1).max(65535) });
    const error = schema.safeParse({ port: 1.5 }).error!;
    expect(zodMessage(error)).toBe("Invalid input: port — must be a whole number.");
  });
});
