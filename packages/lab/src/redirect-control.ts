/**
 * A client for tide-redirect's control socket (newline JSON: status, stats, config).
 *
 * The binary is being written alongside this package and its protocol has no contract in
 * packages/contracts yet, so these schemas are deliberately tolerant: an `{ok, result}` or
 * `{ok:false, error}` envelope (like the director's) or a bare object, and counters found either
 * under `counters` / `totals` or at the top level. Once the contract exists, parse with it here.
 */
import { z } from "zod";
import { ControlSocket, CONTROL_TIMEOUT_MS } from "./control-socket";
import { LabError } from "./errors";

/** The second-chance decision counters GLB's redirect keeps (glb-reference.md). */
export const REDIRECT_COUNTER_NAMES = [
  "total",
  "accepted_syn",
  "accepted_established",
  "accepted_syn_cookie",
  "accepted_last_resort",
  "forwarded_to_self",
  "forwarded_to_alternate",
] as const;
export type RedirectCounterName = (typeof REDIRECT_COUNTER_NAMES)[number];

/** Every numeric counter the redirect reports; the GLB ones are always present (0 if missing). */
export type RedirectCounters = Record<RedirectCounterName, number> & Record<string, number>;

export const RedirectCommand = z
  .enum(["status", "stats", "config"])
  .describe("A tide-redirect control command");
export type RedirectCommand = z.infer<typeof RedirectCommand>;

const RedirectFailure = z.looseObject({
  ok: z.literal(false),
  error: z.union([
    z.string(),
    z.looseObject({ code: z.string().optional(), message: z.string().optional() }),
  ]),
});

const RedirectReply = z.union([
  RedirectFailure,
  z.looseObject({ ok: z.literal(true), result: z.unknown() }),
  z.record(z.string(), z.unknown()),
]);

/** A reply -> its result; throws LabError("control_error") for a failure or a non-object. */
export function redirectResult(raw: unknown, what: string): Record<string, unknown> {
  const parsed = RedirectReply.safeParse(raw);
  if (!parsed.success) throw new LabError("control_error", `${what}: reply is not an object`, { reply: raw });
  const reply = parsed.data as Record<string, unknown>;
  if (reply.ok === false) {
    const error = reply.error;
    const text = typeof error === "string" ? error : JSON.stringify(error);
    throw new LabError("control_error", `${what}: ${text}`, { reply: raw });
  }
  const result = reply.ok === true && "result" in reply ? reply.result : reply;
  if (typeof result !== "object" || result === null || Array.isArray(result)) {
    throw new LabError("control_error", `${what}: result is not an object`, { reply: raw });
  }
  return result as Record<string, unknown>;
}

/** Numeric fields of a stats result (nested `counters` / `totals`, else top level). */
export function parseRedirectCounters(result: Record<string, unknown>): RedirectCounters {
  const nested = result.counters ?? result.totals;
  const source =
    typeof nested === "object" && nested !== null && !Array.isArray(nested)
      ? (nested as Record<string, unknown>)
      : result;
  const counters: Record<string, number> = {};
  for (const name of REDIRECT_COUNTER_NAMES) counters[name] = 0;
  for (const [k, v] of Object.entries(source)) {
    if (typeof v === "number" && Number.isFinite(v)) counters[k] = v;
  }
  return counters as RedirectCounters;
}

export class RedirectControl {
  readonly name: string;
  private readonly socket: ControlSocket;
  private nextId = 1;

  constructor(name: string, socketPath: string) {
    this.name = name;
    this.socket = new ControlSocket(socketPath);
  }

  async call(cmd: RedirectCommand, timeoutMs = CONTROL_TIMEOUT_MS): Promise<Record<string, unknown>> {
    const raw = await this.socket.request({ id: this.nextId++, cmd }, timeoutMs);
    return redirectResult(raw, `${this.name} redirect ${cmd}`);
  }

  status() {
    return this.call("status");
  }

  config() {
    return this.call("config");
  }

  async counters(): Promise<RedirectCounters> {
    return parseRedirectCounters(await this.call("stats"));
  }

  close(): void {
    this.socket.close();
  }
}

/** The name tide-redirect gives its tc program (TIDE_REDIRECT_PROG_NAME, dataplane/redirect/tide_redirect_consts.h). */
export const REDIRECT_PROG_NAME = "tide_redirect";

/**
 * tide-redirect's tc ingress filters in `tc filter show dev <if> ingress` output: what a killed
 * tide-redirect leaves attached (SIGTERM detaches it; SIGKILL or a crash cannot), and what makes a
 * new one refuse to start ("already attached; stop it first").
 */
export function parseRedirectFilters(tcOutput: string): { pref: number; handle: string }[] {
  const out: { pref: number; handle: string }[] = [];
  for (const line of tcOutput.split("\n")) {
    if (!line.includes(` name ${REDIRECT_PROG_NAME} `) && !line.endsWith(` name ${REDIRECT_PROG_NAME}`))
      continue;
    const m = / pref (\d+) bpf .*\bhandle (0x[0-9a-f]+) /.exec(line);
    if (m) out.push({ pref: Number(m[1]), handle: m[2]! });
  }
  return out;
}
