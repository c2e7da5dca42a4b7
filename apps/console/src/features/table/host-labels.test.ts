import { describe, expect, it } from "vitest";
import { distinctHostParts } from "./host-labels";

describe("distinctHostParts", () => {
  it.each([
    {
      names: ["proxy-www-01.dc1.example.net", "proxy-www-02.dc1.example.net", "proxy-www-10.dc1.example.net"],
      want: ["…01", "…02", "…10"],
    },
    { names: ["www-1", "www-2"], want: ["www-1", "www-2"] },
    {
      names: ["lab-proxy-1", "lab-proxy-2", "lab-probe-3"],
      want: ["lab-proxy-1", "lab-proxy-2", "lab-probe-3"],
    },
    { names: ["fra-edge-proxy-1", "fra-edge-probe-2"], want: ["…proxy-1", "…probe-2"] },
    { names: ["edge-fra-01", "edge-fra-01-b"], want: ["…01", "…01-b"] },
    { names: ["only-one-host"], want: ["only-one-host"] },
    { names: ["a.example", "b.example"], want: ["a", "b"] },
    { names: ["edge-01.fra.example", "edge-01.ams.example"], want: ["…fra.example", "…ams.example"] },
  ])("$names", ({ names, want }) => {
    const parts = distinctHostParts(names);
    expect(names.map((n) => parts.get(n))).toEqual(want);
  });
});
