import { describe, expect, it } from "vitest";
import { WEB, namespace, sample } from "../__fixtures__/observations";
import { diagnose } from "../diagnose";
import { portOnlyListenHash } from "./listener-crowding";

/** A DNS service with one listener per address on :53 (listenPorts is complete, listeners truncated). */
function dns(sockets: number, kernelRelease: string | null = "6.12.48-tide") {
  const ns = namespace(0, {
    netns: WEB,
    listeners: [{ address: "10.53.0.1", port: 53, recvQ: 0, sendQ: 4096, requestedBacklog: null }],
    listenPorts: [
      { port: 53, sockets },
      { port: 443, sockets: 2 },
    ],
  });
  return diagnose([sample(0, { namespaces: [namespace(0), ns], kernelRelease })]).filter(
    (f) => f.kind === "listener_crowding",
  );
}

describe("listener_crowding", () => {
  it.each([
    [1024, null],
    [1025, "warn"],
    [16384, "warn"],
  ])("%s LISTEN sockets on one port give %s on a current kernel", (sockets, severity) => {
    const found = dns(sockets);
    expect(found[0]?.severity ?? null).toBe(severity);
    if (severity !== null) {
      expect(found).toHaveLength(1);
      expect(found[0]!.subject).toMatchObject({ netns: WEB, port: 53 });
      expect(found[0]!.evidence[0]).toMatchObject({ metric: "ss.listen.sockets_per_port", value: sockets });
    }
  });

  it("is critical on a kernel with the port-only listening hash", () => {
    const [f] = dns(16384, "4.14.301-1");
    expect(f!.severity).toBe("critical");
    expect(f!.explanation).toContain("32 buckets");
    expect(f!.remedy.steps.map((s) => s.scope)).toContain("host");
  });

  it("is warn when the kernel release is unknown", () => {
    expect(dns(2048, null)[0]!.severity).toBe("warn");
  });
});

describe("portOnlyListenHash", () => {
  it.each([
    ["4.16.18", true],
    ["3.10.0-1160.el7.x86_64", true],
    ["4.17.0", false],
    ["5.4.0-150-generic", false],
    ["garbage", null],
  ])("%s -> %s", (release, expected) => {
    expect(portOnlyListenHash(release)).toBe(expected);
  });
});
