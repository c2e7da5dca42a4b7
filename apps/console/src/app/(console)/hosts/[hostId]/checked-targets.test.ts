import { describe, expect, it } from "vitest";
import { checkedTargets } from "./checked-targets";

describe("checkedTargets", () => {
  it("names reported targets the console did not set as the agent's own, once each", () => {
    expect(checkedTargets(["10.30.0.2"], ["10.30.0.2", "10.40.0.1", "edge-gw", "10.40.0.1"])).toEqual({
      fromConsole: ["10.30.0.2"],
      fromAgent: ["10.40.0.1", "edge-gw"],
    });
  });

  it("keeps console targets that have no result yet", () => {
    expect(checkedTargets(["b.example", "a.example"], [])).toEqual({
      fromConsole: ["b.example", "a.example"],
      fromAgent: [],
    });
  });

  it("counts agent-only targets when the console set none", () => {
    expect(checkedTargets([], ["10.30.0.2"]).fromAgent).toEqual(["10.30.0.2"]);
  });
});
