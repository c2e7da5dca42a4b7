import { existsSync } from "node:fs";
import path from "node:path";
import type { BccTool, BccToolName } from "@tide/contracts";

/**
 * Whether a bcc tool can run here, decided from the file system before spawning it: bcc compiles
 * its BPF C at start-up (a second or more of CPU) and would fail the same way on every retry.
 *  - installed: Debian's `/usr/sbin/<tool>-bpfcc`, upstream's `/usr/share/bcc/tools/<tool>`;
 *  - kernel headers: bcc's clang needs /lib/modules/$(uname -r)/build or CONFIG_IKHEADERS
 *    (/sys/kernel/kheaders.tar.xz);
 *  - tcpconnlat attaches kprobes (tcp_v4_connect, tcp_rcv_state_process): kprobe_events must exist.
 *    softirqs uses the irq:softirq_entry/exit tracepoints since bcc 0.4.
 */
export interface BccHost {
  /** uname -r */
  release: string;
  /** Prefix for every path checked (tests use a fixture tree); "/" on a host. */
  root?: string;
}

export type BccCheck = { ok: true; binary: string } | { ok: false; tool: BccTool };

export const BCC_TOOLS: readonly BccToolName[] = ["tcpconnlat", "softirqs"];

export function checkBccTool(tool: BccToolName, host: BccHost): BccCheck {
  const at = (p: string) => path.join(host.root ?? "/", p);
  const off = (reason: NonNullable<BccTool["reason"]>, detail: string): BccCheck => ({
    ok: false,
    tool: { tool, state: "off", reason, detail },
  });
  const candidates = [`/usr/sbin/${tool}-bpfcc`, `/usr/share/bcc/tools/${tool}`];
  const binary = candidates.find((c) => existsSync(at(c)));
  if (!binary) return off("not_installed", `none of ${candidates.join(", ")} (apt install bpfcc-tools)`);
  const headers = [`/lib/modules/${host.release}/build`, "/sys/kernel/kheaders.tar.xz"];
  if (!headers.some((h) => existsSync(at(h))))
    return off(
      "kernel_headers_missing",
      `bcc compiles against kernel headers: none of ${headers.join(", ")}`,
    );
  if (tool === "tcpconnlat") {
    const kprobes = ["/sys/kernel/tracing/kprobe_events", "/sys/kernel/debug/tracing/kprobe_events"];
    if (!kprobes.some((k) => existsSync(at(k))))
      return off("kprobes_unavailable", `no kprobe_events (kernel without CONFIG_KPROBE_EVENTS)`);
  }
  return { ok: true, binary };
}
