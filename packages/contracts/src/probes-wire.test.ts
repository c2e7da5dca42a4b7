import { describe, expect, it } from "vitest";
import { ProbesHello, ProbesLine } from "./probes-wire";
import { PROBES_HELLO, PROBES_LISTEN as LISTEN, PROBES_SAMPLE as SAMPLE } from "./testing";

// Lines as dataplane/build/tide-probes wrote them, shared with the agent's tests.
const HELLO = { ...PROBES_HELLO, pin_dir: "/sys/fs/bpf/tide-probes" };

describe("ProbesLine", () => {
  it("accepts the loader's hello, listen and sample lines as they are", () => {
    for (const line of [HELLO, LISTEN, SAMPLE]) expect(ProbesLine.parse(line)).toEqual(line);
  });

  it("accepts a listen() with a negative backlog and a sample with only some sections", () => {
    expect(ProbesLine.safeParse({ ...LISTEN, requested: -1, limited: false }).success).toBe(true);
    expect(ProbesLine.safeParse({ type: "sample", at: 1 }).success).toBe(true);
  });

  it("keeps the reason of an off probe and drops fields a newer loader adds", () => {
    const hello = ProbesHello.parse({ ...HELLO, uptime_s: 3 });
    expect(hello.probes.icmp_frag_needed).toEqual({
      on: false,
      reason: "tracepoint icmp:icmp_send not found",
    });
    expect(hello).not.toHaveProperty("uptime_s");
  });

  it("refuses malformed lines", () => {
    const bad: unknown[] = [
      { ...SAMPLE, netrx: [{ ...SAMPLE.netrx[0], max_us: -1 }] },
      { ...SAMPLE, connect: [{ ...SAMPLE.connect[0], hist: ["1"] }] },
      { ...LISTEN, family: "ipx" },
      { ...LISTEN, port: 65536 },
      { ...HELLO, probes: { listen_backlog: { on: false } } },
      { ...HELLO, at: "now" },
      { type: "goodbye", at: 1 },
      "hello",
    ];
    for (const line of bad) expect(ProbesLine.safeParse(line).success, JSON.stringify(line)).toBe(false);
  });
});
