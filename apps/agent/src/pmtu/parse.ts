import type { PmtuPathResult } from "@tide/contracts";

/** ICMP echo payload + IPv4 header (20) + ICMP header (8): `ping -s SIZE` sends SIZE + 28 bytes. */
export const PING_OVERHEAD_BYTES = 28;
/** The small probe every check sends first (ping's default payload). */
export const SMALL_PROBE_SIZE = 56;
/** Longest evidence text (the contract allows 4000 characters). */
const EVIDENCE_MAX = 4000;

export interface TracepathHop {
  hop: number;
  /** Address, or null for `no reply`. */
  address: string | null;
  pmtu: number | null;
  reached: boolean;
  line: string;
}

export interface TracepathResult {
  /** `1?: [LOCALHOST] pmtu N`, or null when tracepath did not print it (loopback). */
  localMtu: number | null;
  /** The footer's pmtu (Resume / Too many hops), else the last pmtu seen on a hop line. */
  pmtu: number | null;
  /** Hops to the target (Resume's `hops H`, else the reached hop), null if not reached. */
  hops: number | null;
  reached: boolean;
  noReplyHops: number;
  tooManyHops: boolean;
  hopLines: TracepathHop[];
  /** The lines that carry a decision (LOCALHOST, pmtu changes, reached, footer, first no reply). */
  evidence: string[];
}

const num = (s: string | undefined): number | null => {
  if (s === undefined) return null;
  const n = Number(s);
  return Number.isInteger(n) ? n : null;
};

/** Parse `LC_ALL=C tracepath -n` output (tolerates any token order after the address and junk lines). */
export function parseTracepath(text: string): TracepathResult {
  const out: TracepathResult = {
    localMtu: null,
    pmtu: null,
    hops: null,
    reached: false,
    noReplyHops: 0,
    tooManyHops: false,
    hopLines: [],
    evidence: [],
  };
  let footerPmtu: number | null = null;
  let lastHopPmtu: number | null = null;
  let resumeHops: number | null = null;
  let reachedHop: number | null = null;
  for (const raw of text.split("\n")) {
    const line = raw.trimEnd();
    const trimmed = line.trim();
    if (trimmed === "") continue;
    let m = /^\s*\d+\?:\s+\[LOCALHOST\]\s+pmtu\s+(\d+)/.exec(line);
    if (m) {
      out.localMtu = num(m[1]);
      out.evidence.push(trimmed);
      continue;
    }
    m = /^Too many hops:\s+pmtu\s+(\d+)/.exec(trimmed);
    if (m) {
      out.tooManyHops = true;
      footerPmtu = num(m[1]);
      out.evidence.push(trimmed);
      continue;
    }
    m = /^Resume:\s+pmtu\s+(\d+)(?:\s+hops\s+(\d+))?(?:\s+back\s+(\d+))?/.exec(trimmed);
    if (m) {
      footerPmtu = num(m[1]);
      resumeHops = num(m[2]);
      out.evidence.push(trimmed);
      continue;
    }
    m = /^\s*(\d+):\s+no reply\b/.exec(line);
    if (m) {
      const hop = num(m[1])!;
      if (out.noReplyHops === 0) out.evidence.push(trimmed);
      out.noReplyHops++;
      out.hopLines.push({ hop, address: null, pmtu: null, reached: false, line: trimmed });
      continue;
    }
    m = /^\s*(\d+):\s+(\S+)\s+(.*)$/.exec(line);
    if (m) {
      const hop = num(m[1])!;
      const rest = m[3]!;
      const pm = /\bpmtu\s+(\d+)/.exec(rest);
      const pmtu = pm ? num(pm[1]) : null;
      const reached = /\breached\b/.test(rest);
      out.hopLines.push({ hop, address: m[2]!, pmtu, reached, line: trimmed });
      if (pmtu !== null) {
        lastHopPmtu = pmtu;
        out.evidence.push(trimmed);
      }
      if (reached) {
        out.reached = true;
        reachedHop ??= hop;
        if (pmtu === null) out.evidence.push(trimmed);
      }
    }
  }
  out.pmtu = footerPmtu ?? lastHopPmtu ?? out.localMtu;
  if (out.reached) out.hops = resumeHops ?? reachedHop;
  return out;
}

export interface PingResult {
  size: number;
  transmitted: number;
  received: number;
  /** "Frag needed and DF set (mtu = N)" from a router, or ping's "local error: message too long, mtu=N". */
  fragNeededMtu: number | null;
  /** Where the frag-needed came from: "router" (ICMP) or "local" (our own interface/route MTU). */
  fragNeededFrom: "router" | "local" | null;
  /** Neither a reply nor an ICMP error nor a local error: silent loss. */
  silent: boolean;
  evidence: string[];
}

/** Parse `LC_ALL=C ping -M do -s SIZE -c N -W T` output (stdout and stderr together). */
export function parsePing(size: number, text: string): PingResult {
  const out: PingResult = {
    size,
    transmitted: 0,
    received: 0,
    fragNeededMtu: null,
    fragNeededFrom: null,
    silent: false,
    evidence: [],
  };
  let errors = 0;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    let m = /Frag needed and DF set \(mtu = (\d+)\)/.exec(line);
    if (m) {
      const mtu = num(m[1]);
      if (mtu !== null) out.fragNeededMtu = Math.min(out.fragNeededMtu ?? mtu, mtu);
      if (out.fragNeededFrom !== "router") out.evidence.push(line);
      out.fragNeededFrom = "router";
      continue;
    }
    m = /local error: message too long, mtu=(\d+)/.exec(line);
    if (m) {
      const mtu = num(m[1]);
      if (mtu !== null) out.fragNeededMtu = Math.min(out.fragNeededMtu ?? mtu, mtu);
      if (out.fragNeededFrom === null) {
        out.fragNeededFrom = "local";
        out.evidence.push(line);
      }
      continue;
    }
    m = /(\d+) packets transmitted, (\d+) (?:packets )?received(?:, \+(\d+) errors)?/.exec(line);
    if (m) {
      out.transmitted = num(m[1]) ?? 0;
      out.received = num(m[2]) ?? 0;
      errors = num(m[3]) ?? 0;
      out.evidence.push(line);
    }
  }
  out.silent = out.transmitted > 0 && out.received === 0 && errors === 0 && out.fragNeededMtu === null;
  return out;
}

export interface PmtuCheck {
  target: string;
  measuredAt: string;
  /** null when tracepath did not run or timed out with no output. */
  tracepath: TracepathResult | null;
  /** Every ping run, small probe included. */
  pings: PingResult[];
  /** Problems running the tools (timeouts, missing binaries): part of the evidence. */
  notes?: string[];
}

function clip(lines: string[]): string {
  const text = lines.join("\n");
  return text.length <= EVIDENCE_MAX ? text : `${text.slice(0, EVIDENCE_MAX - 1)}…`;
}

/**
 * Decide one path: pmtu, hops, reached, and the blackhole pattern (small probes reach the target,
 * DF probes that fit the path's claimed MTU get no reply and no ICMP error).
 */
export function decidePmtu(c: PmtuCheck): PmtuPathResult {
  const tp = c.tracepath;
  const small = c.pings.filter((p) => p.size <= SMALL_PROBE_SIZE);
  const large = c.pings.filter((p) => p.size > SMALL_PROBE_SIZE).sort((a, b) => a.size - b.size);
  const smallReached = small.some((p) => p.received > 0);
  const reached = (tp?.reached ?? false) || c.pings.some((p) => p.received > 0);

  const routerMtus = c.pings.map((p) => p.fragNeededMtu).filter((m): m is number => m !== null);
  let pmtu = tp?.pmtu ?? null;
  for (const m of routerMtus) pmtu = pmtu === null ? m : Math.min(pmtu, m);
  const claimed = pmtu ?? tp?.localMtu ?? null;

  // A DF probe that fits the claimed MTU and vanished without a word.
  const vanished = large.filter(
    (p) => p.silent && (claimed === null || p.size + PING_OVERHEAD_BYTES <= claimed),
  );
  const tracepathStuck =
    tp !== null && !tp.reached && tp.noReplyHops > 0 && (tp.tooManyHops || tp.hopLines.length > 0);
  const blackhole = smallReached && (vanished.length > 0 || (large.length === 0 && tracepathStuck));

  const evidence: string[] = [];
  for (const p of small) evidence.push(`ping -s ${p.size}: ${p.evidence.join(" | ") || "no output"}`);
  for (const p of large) evidence.push(`ping -M do -s ${p.size}: ${p.evidence.join(" | ") || "no output"}`);
  if (tp !== null) evidence.push(...tp.evidence.map((l) => `tracepath: ${l}`));
  for (const n of c.notes ?? []) evidence.push(n);
  if (blackhole) {
    const v = vanished[0];
    evidence.unshift(
      v !== undefined
        ? `blackhole: ${SMALL_PROBE_SIZE}-byte probes reach ${c.target}; DF probes of ${v.size + PING_OVERHEAD_BYTES} bytes (path MTU claimed ${claimed ?? "unknown"}) get no reply and no ICMP frag-needed`
        : `blackhole: small probes reach ${c.target}; tracepath's large DF probes get no reply past hop ${lastAnsweringHop(tp)}`,
    );
  }

  return {
    target: c.target,
    method: blackhole && vanished.length > 0 ? "ping" : tp !== null ? "tracepath" : "ping",
    measuredAt: c.measuredAt,
    localMtu: tp?.localMtu !== null && tp?.localMtu !== undefined && tp.localMtu >= 68 ? tp.localMtu : null,
    pmtu: pmtu !== null && pmtu >= 68 ? pmtu : null,
    hops: reached && tp?.reached ? tp.hops : null,
    reached,
    blackhole,
    evidence: clip(evidence),
  };
}

function lastAnsweringHop(tp: TracepathResult | null): number | string {
  let last: number | null = null;
  for (const h of tp?.hopLines ?? []) if (h.address !== null) last = h.hop;
  return last ?? "?";
}
