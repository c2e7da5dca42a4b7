import { describe, expect, it } from "vitest";
import { labHosts } from "./console/fleet.plan";
import { isLabError } from "./errors";
import { resolveRestartName } from "./lab-restart";
import { buildGlbTopology } from "./topology";

const hosts = labHosts(buildGlbTopology());
const keys = [
  "prx1.server",
  "prx1.redirect",
  "prx2.server",
  "prx2.redirect",
  "dir1",
  "dir2",
  "dir1.agent",
  "prx2.agent",
  "client.load",
];

function refusal(name: string, recorded = keys): string {
  try {
    resolveRestartName(name, recorded, hosts);
  } catch (e) {
    if (isLabError(e, "bad_argument")) return e.message;
    throw e;
  }
  throw new Error(`${name} was resolved`);
}

describe("resolveRestartName", () => {
  it.each([
    ["dir1", "dir1"],
    ["prx2.redirect", "prx2.redirect"],
    ["client.load", "client.load"],
    ["lab-director-1", "dir1"],
    ["director-2", "dir2"],
    ["lab-director-1.agent", "dir1.agent"],
    ["lab-proxy-2.agent", "prx2.agent"],
    ["proxy-2.agent", "prx2.agent"],
    ["proxy-1.server", "prx1.server"],
  ])("takes %s as %s", (name, key) => {
    expect(resolveRestartName(name, keys, hosts)).toBe(key);
  });

  it("asks which one when a node runs several processes", () => {
    expect(refusal("prx2")).toBe(
      '"prx2" runs several processes: name one of prx2.server, prx2.redirect, prx2.agent',
    );
    expect(refusal("lab-proxy-1")).toMatch(/name one of prx1\.server, prx1\.redirect$/);
  });

  it("lists the lab's processes for an unknown name", () => {
    expect(refusal("dir3")).toBe(`no lab process "dir3"; the lab's processes: ${keys.join(", ")}`);
    expect(refusal("prx1.agent")).toMatch(/no lab process "prx1.agent"/);
    expect(refusal("lab-director-9")).toMatch(/no lab process/);
    expect(refusal("dir1", [])).toMatch(/the lab's processes: none$/);
  });
});
