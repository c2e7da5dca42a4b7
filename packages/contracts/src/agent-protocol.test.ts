import { describe, expect, it } from "vitest";
import { AgentHello, AgentObservationsReply, DesiredState } from "./agent-protocol";

const hello = {
  protocolVersion: 1,
  agentVersion: "0.1.0",
  hostname: "lb-fra-03",
  kernelRelease: "6.18.0",
  roles: ["director"],
  probes: [],
  dataPlane: [
    {
      component: "director",
      socket: "/run/tide/director.sock",
      reachable: false,
      error: "connect ENOENT",
      version: null,
      tableHashes: {},
      directorCounters: null,
      redirectCounters: null,
    },
  ],
};

describe("agent protocol", () => {
  it("accepts a hello from a director whose data plane is down", () => {
    expect(AgentHello.parse(hello).dataPlane[0]!.reachable).toBe(false);
  });

  it("refuses unknown roles, other protocol versions and unknown fields", () => {
    expect(AgentHello.safeParse({ ...hello, roles: ["router"] }).success).toBe(false);
    expect(AgentHello.safeParse({ ...hello, protocolVersion: 2 }).success).toBe(false);
    expect(AgentHello.safeParse({ ...hello, token: "x" }).success).toBe(false);
    expect(AgentHello.safeParse({ ...hello, roles: [] }).success).toBe(false);
  });

  it("bounds the desired state the console may ask for", () => {
    const desired = {
      revision: 3,
      sampleIntervalMs: 1000,
      batchMaxObservations: 60,
      pmtuTargets: [{ target: "10.100.1.2", sizes: [1400, 1472] }],
      directorTables: [],
    };
    expect(DesiredState.parse(desired).revision).toBe(3);
    expect(DesiredState.safeParse({ ...desired, sampleIntervalMs: 10 }).success).toBe(false);
    expect(DesiredState.safeParse({ ...desired, batchMaxObservations: 601 }).success).toBe(false);
    expect(AgentObservationsReply.safeParse({ accepted: -1, desiredRevision: 0 }).success).toBe(false);
  });
});
