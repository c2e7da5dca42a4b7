import { z } from "zod";
import { Ipv4Address } from "./control-socket";

/**
 * tide-healthcheck's wire format (dataplane/healthcheck): the agent on a director host spawns it once
 * (inside the director's network namespace with --netns) and talks newline-delimited JSON over its
 * stdin/stdout, one object per line, at most HEALTHCHECK_MAX_LINE_BYTES.
 *
 *   first line out:  HealthcheckReady (or a message on stderr and exit status 1)
 *   each line in:    HealthcheckRequest
 *   each line out:   HealthcheckResult, with the request's id, in the order checks finish (checks
 *                    run concurrently; a check never takes longer than its timeoutMs)
 *
 * A line that is not a valid request gets a result with ok: false and the reason (id 0 when the id
 * could not be read); the process goes on. EOF on stdin: it finishes running checks and exits 0.
 *
 * Checks, as glb-healthcheck's:
 *  - gue:  a UDP datagram to target:port (the GUE port) holding a GUE header (hlen 1, proto 4, no
 *          hops) and an inner IPv4 ICMP echo request from the namespace's source address to
 *          target. tide-redirect on the proxy decapsulates it (inner ICMP is accepted locally) and
 *          the proxy's kernel answers the echo directly: it proves the path a client packet takes.
 *  - tcp:  a TCP connect to target:port (closed at once).
 *  - http: GET path on target:port over TCP (HTTP/1.0, Host: target); ok when the status is
 *          expectStatus.
 */
export const HEALTHCHECK_MAX_LINE_BYTES = 4096;

export const HealthcheckKind = z.enum(["gue", "tcp", "http"]).describe("Which check");
export type HealthcheckKind = z.infer<typeof HealthcheckKind>;

export const HealthcheckRequest = z
  .strictObject({
    id: z
      .int()
      .min(1)
      .max(2 ** 31 - 1)
      .describe("Chosen by the agent; echoed in the result"),
    kind: HealthcheckKind,
    target: Ipv4Address.describe("The proxy's own address"),
    port: z.int().min(1).max(65535).describe("gue: the GUE port (19523); tcp/http: the service port"),
    path: z
      .string()
      .regex(/^\/[\x21-\x7e]{0,255}$/, "must be an absolute path of printable characters")
      .optional()
      .describe("http only: the path to GET"),
    expectStatus: z.int().min(100).max(599).optional().describe("http only: the status that means up"),
    timeoutMs: z.int().min(10).max(60_000).describe("The check fails after this long"),
  })
  .describe("One check to run");
export type HealthcheckRequest = z.infer<typeof HealthcheckRequest>;

export const HealthcheckResult = z
  .strictObject({
    id: z.int().min(0).describe("The request's id (0: the line could not be read)"),
    ok: z.boolean(),
    latencyUs: z.int().min(0).nullable().describe("Time to the answer, µs; null when there was none"),
    detail: z
      .string()
      .max(300)
      .describe(
        'What happened, in words: "echo reply", "connected", "HTTP 200", "timeout after 1000 ms", ' +
          '"connection refused", "HTTP 503 (expected 200)", "no route to host", ...',
      ),
  })
  .describe("The outcome of one check");
export type HealthcheckResult = z.infer<typeof HealthcheckResult>;

export const HealthcheckReady = z
  .strictObject({
    ready: z.literal(true),
    version: z.string(),
    netns: z.string().nullable().describe("The namespace it runs in (--netns), null = its own"),
  })
  .describe("The first line tide-healthcheck writes");
export type HealthcheckReady = z.infer<typeof HealthcheckReady>;
