import type { ProxyTraffic } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { formatRate, rateCellView } from "./traffic-cell";

const traffic = (t: Partial<ProxyTraffic> = {}): ProxyTraffic => ({
  proxyId: "prx_1",
  hostname: "www-proxy-1",
  hostId: "host_1",
  at: "2026-11-28T06:00:00.000Z",
  stale: false,
  late: false,
  lateReason: null,
  scope: "pool",
  newConnectionsPerS: 3,
  forwardedToAlternatePerS: 0,
  acceptedEstablishedPerS: 600,
  acceptedSecondChancePerS: 0,
  acceptedAlternateHashPerS: 0,
  acceptedLastResortPerS: 0,
  secondChancePerS: 0,
  established: 10,
  establishedFallingPerS: null,
  findings: { critical: 0, warn: 0, info: 0 },
  ...t,
});

describe("rateCellView", () => {
  it("shows a late reading as late with its reason, never as 0", () => {
    const t = traffic({ late: true, lateReason: "no reading for 4 s", secondChancePerS: null });
    expect(rateCellView(t, t.secondChancePerS)).toEqual({
      text: "late",
      late: true,
      hostWide: false,
      title: "no reading for 4 s",
    });
  });

  it("shows stale or never reported figures as unknown", () => {
    expect(rateCellView(traffic({ late: true, stale: true, secondChancePerS: null }), null).text).toBe("—");
    expect(rateCellView(undefined, undefined).text).toBe("—");
  });

  it("shows the pool's figure, and marks a host-wide one", () => {
    expect(rateCellView(traffic(), 0)).toEqual({ text: "0", late: false, hostWide: false, title: undefined });
    const host = rateCellView(traffic({ scope: "host" }), 12.5, "New/s");
    expect(host).toMatchObject({ text: "13", hostWide: true });
    expect(host.title).toMatch(/^New\/s \(the host's total over every pool/);
  });

  it("formats rates with one decimal below 10", () => {
    expect([formatRate(0), formatRate(0.46), formatRate(9.95), formatRate(450.4), formatRate(null)]).toEqual([
      "0",
      "0.5",
      "9.9",
      "450",
      "—",
    ]);
  });
});
