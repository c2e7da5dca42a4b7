import type { Finding } from "@tide/contracts";
import {
  finding,
  netnsLabel,
  netnsLabelCapitalized,
  subject,
  valueEvidence,
  type Rule,
  type RuleContext,
} from "../evaluation";

/**
 * Incident 7: listening hash crowding. Many listeners on one port bound to distinct addresses (16k
 * sockets on :53) land in one bucket of the old 32-bucket, port-only listening hash, and every SYN
 * and RST walks the chain (milliseconds). Kernels since 4.17 also hash by address, but a huge
 * per-port listener count is still a finding. Counted from the latest sample's listenPorts (complete
 * even when the listener list is truncated): > LISTENER_CROWDING_WARN warn, critical on older kernels.
 */

/** First kernel (major, minor) whose listening lookup hashes by address and port (lhash2). */
export const LISTENER_HASH_BY_ADDRESS_SINCE: readonly [number, number] = [4, 17];

/** Whether the kernel release predates the address-and-port listening hash, or null if unknown. */
export function portOnlyListenHash(kernelRelease: string | null): boolean | null {
  const m = kernelRelease === null ? null : /^(\d+)\.(\d+)/.exec(kernelRelease);
  if (m === null) return null;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  const [sinceMajor, sinceMinor] = LISTENER_HASH_BY_ADDRESS_SINCE;
  return major < sinceMajor || (major === sinceMajor && minor < sinceMinor);
}

function evaluate(ctx: RuleContext): Finding[] {
  const out: Finding[] = [];
  const limit = ctx.settings.listenerCrowdingWarn;
  const oldKernel = portOnlyListenHash(ctx.window.latest.kernelRelease);
  for (const ns of ctx.window.latest.namespaces) {
    for (const p of [...ns.listenPorts].sort((a, b) => a.port - b.port)) {
      if (p.sockets <= limit) continue;
      const where = netnsLabel(ns);
      out.push(
        finding(ctx, {
          kind: "listener_crowding",
          severity: oldKernel === true ? "critical" : "warn",
          subject: subject(ctx.window.hostId, { netns: ns.netns, port: p.port }),
          title: `${p.sockets} LISTEN sockets on :${p.port} in ${where}`,
          evidence: [
            valueEvidence(ctx, "ss.listen.sockets_per_port", p.sockets, "sockets", {
              warn: limit,
              critical: null,
            }),
          ],
          explanation:
            `${netnsLabelCapitalized(ns)} has ${p.sockets} TCP LISTEN sockets on port ${p.port} (typically one per local ` +
            "address). " +
            (oldKernel === true
              ? `This kernel (${ctx.window.latest.kernelRelease}) hashes listeners by port only into 32 ` +
                "buckets, so they all share one chain and every SYN and RST to this host walks it: " +
                "milliseconds per packet, in softirq."
              : "Kernels before 4.17 put them all in one chain of a port-only hash that every SYN and RST " +
                "walks; newer kernels also hash by address, but this many sockets still cost memory, " +
                "setup time and lookups on wildcard fallbacks, and one kernel downgrade brings the stall back."),
          remedy: {
            summary: `Serve :${p.port} from a few wildcard listeners instead of one socket per address.`,
            steps: [
              {
                scope: "application",
                action:
                  `Bind one wildcard listener (0.0.0.0:${p.port} / [::]:${p.port}, or a small SO_REUSEPORT ` +
                  "group) and learn the local address per connection with getsockname() (IP_PKTINFO for UDP).",
                command: null,
              },
              ...(oldKernel === true
                ? [
                    {
                      scope: "host" as const,
                      action: "Upgrade to a kernel of 4.17 or later (listening hash by address and port).",
                      command: null,
                    },
                  ]
                : []),
            ],
          },
        }),
      );
    }
  }
  return out;
}

export const listenerCrowdingRule: Rule = {
  kinds: ["listener_crowding"],
  evaluate,
  canEvaluate: () => true,
};
