import { describe, expect, it } from "vitest";
import { AgentHelloReply, AgentObservationsReply } from "./agent-protocol";

/**
 * A console one minor version newer than an agent may add fields to its replies (version-skew.ts);
 * the agent's schemas of those replies must take such a reply and drop what they do not know.
 */
const desired = {
  revision: 3,
  sampleIntervalMs: 1000,
  batchMaxObservations: 60,
  pmtuTargets: [{ target: "10.30.0.2", sizes: [1400], everyMs: 60_000 }],
  directorTables: [
    {
      poolId: "pool_1",
      poolName: "www",
      tableVersionId: "tv_1",
      contentHash: "a".repeat(64),
      downloadPath: "/api/v1/pools/pool_1/tables/1/glbd",
      altHashFields: ["src_addr"],
    },
  ],
  healthChecks: [],
  drainNotices: [{ proxyId: "prx_1" }],
};

describe("replies from a newer console", () => {
  it("hello's reply with fields this agent does not know parses, without them", () => {
    const reply = AgentHelloReply.parse({ hostId: "lb-01", desired, consoleFeatures: ["x"] });
    expect(reply).not.toHaveProperty("consoleFeatures");
    expect(reply.desired).not.toHaveProperty("drainNotices");
    expect(reply.desired.directorTables[0]).not.toHaveProperty("altHashFields");
    expect(reply.desired.pmtuTargets[0]).toEqual({ target: "10.30.0.2", sizes: [1400] });
  });

  it("a batch reply with new fields parses; a known field with a wrong type still fails", () => {
    const reply = AgentObservationsReply.parse({
      accepted: 1,
      desiredRevision: 3,
      refused: [{ sampledAt: "2026-11-28T00:00:00.000Z", reason: "duplicate", detail: "x", hint: "y" }],
      pauseUntil: "later",
    });
    expect(reply).toEqual({
      accepted: 1,
      desiredRevision: 3,
      refused: [{ sampledAt: "2026-11-28T00:00:00.000Z", reason: "duplicate", detail: "x" }],
    });
    expect(() => AgentObservationsReply.parse({ accepted: "1", desiredRevision: 3 })).toThrow();
  });
});
