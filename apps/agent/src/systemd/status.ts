import type { AgentProgress } from "../agent";
import type { SystemdNotify } from "./notify";

/**
 * When the agent tells systemd it is ready, and the STATUS= line `systemctl status tide-agent`
 * shows. Pure: `agentStatus` decides from the agent's progress after each sample; `Readiness`
 * sends what changed.
 *
 * Ready (READY=1) means the agent is doing its job, which is not the same as the console being up:
 *  - with a console: once a batch of its samples is stored, or once an attempt failed and it is
 *    buffering (unreachable, a refused host token, an untrusted certificate): a console outage
 *    must not fail the unit's start (the agent keeps sampling and replays later);
 *  - local-only: after its first sample.
 */

export type Phase = "starting" | "reporting" | "unreachable" | "token" | "tls" | "version" | "local";

export interface AgentStatus {
  phase: Phase;
  ready: boolean;
  status: string;
}

const plural = (n: number, one: string): string => `${n} ${one}${n === 1 ? "" : "s"}`;

export function agentStatus(p: AgentProgress): AgentStatus {
  const c = p.console;
  if (c === null) {
    return {
      phase: p.samples > 0 ? "local" : "starting",
      ready: p.samples > 0,
      status: `sampling as ${p.hostname}, local-only (no consoleUrl): /metrics and doctor only`,
    };
  }
  const why = c.lastError !== null ? `: ${c.lastError}` : "";
  switch (c.failing) {
    case "unreachable":
      return {
        phase: "unreachable",
        ready: true,
        status: `console ${c.url} unreachable, buffering ${plural(c.buffered, "sample")}${why}`,
      };
    case "token":
      return {
        phase: "token",
        ready: true,
        status: `console ${c.url} rejected the host token (check hostTokenFile), buffering ${plural(c.buffered, "sample")}`,
      };
    case "tls":
      return {
        phase: "tls",
        ready: true,
        // lastError is ConsoleTlsError's line: the console, why, and what to set.
        status: `${c.lastError ?? `console ${c.url}: its TLS certificate is not accepted`}; buffering ${plural(c.buffered, "sample")}`,
      };
    case "version":
      return {
        phase: "version",
        ready: true,
        // lastError is the console's reason, naming both versions and which side to upgrade.
        status: `console ${c.url} refuses this agent's version: ${c.lastError ?? "version skew"}; buffering ${plural(c.buffered, "sample")}`,
      };
    case null:
      break;
  }
  if (c.delivered === 0) {
    return { phase: "starting", ready: false, status: `connecting to ${c.url} as ${p.hostname}` };
  }
  return {
    phase: "reporting",
    ready: true,
    status:
      `reporting to ${c.url} as ${p.hostname}` +
      (c.buffered > 1 ? `, ${plural(c.buffered, "sample")} to send` : ""),
  };
}

/** A status that only changes a count is sent at most this often, ms; a new phase at once. */
export const STATUS_EVERY_MS = 10_000;

/**
 * Sends READY=1 once (per start or reload: `reset()`), then STATUS= when the phase changes, or when
 * the text changes and STATUS_EVERY_MS has passed (a buffering count moves every sample).
 */
export class Readiness {
  private ready = false;
  private phase: Phase | null = null;
  private text = "";
  private sentAt = 0;

  constructor(
    private readonly notify: Pick<SystemdNotify, "ready" | "status">,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether READY=1 was sent since the last reset. */
  get isReady(): boolean {
    return this.ready;
  }

  /** The last status sent (reload refusals repeat it with READY=1). */
  get lastStatus(): string {
    return this.text;
  }

  /** A new agent (reload): READY=1 again once it is doing its job. */
  reset(): void {
    this.ready = false;
    this.phase = null;
  }

  update(progress: AgentProgress): void {
    const s = agentStatus(progress);
    const t = this.now();
    if (!this.ready) {
      if (!s.ready) return;
      this.ready = true;
      this.remember(s, t);
      void this.notify.ready(s.status);
      return;
    }
    if (s.status === this.text) return;
    if (s.phase === this.phase && t - this.sentAt < STATUS_EVERY_MS) return;
    this.remember(s, t);
    void this.notify.status(s.status);
  }

  private remember(s: AgentStatus, t: number): void {
    this.phase = s.phase;
    this.text = s.status;
    this.sentAt = t;
  }
}
