import { describe, expect, it } from "vitest";
import { parseReleaseVersion, versionSkew } from "./version-skew";

describe("parseReleaseVersion", () => {
  it.each([
    ["0.1.0", { major: 0, minor: 1, patch: 0 }],
    ["v1.12.3", { major: 1, minor: 12, patch: 3 }],
    ["0.2.0+deb13", { major: 0, minor: 2, patch: 0 }],
    ["2.0.0-rc.1", { major: 2, minor: 0, patch: 0 }],
  ])("reads %s", (text, version) => {
    expect(parseReleaseVersion(text)).toEqual(version);
  });

  it.each(["", "1.2", "1.2.x", "latest", "1.2.3 4", "01234567.0.0"])("refuses %j", (text) => {
    expect(parseReleaseVersion(text)).toBeNull();
  });
});

describe("versionSkew", () => {
  // console, agent, compatible
  it.each([
    ["0.2.0", "0.2.0", true],
    ["0.2.0", "0.2.7", true],
    ["0.2.0", "0.1.9", true], // one minor older
    ["0.2.0", "0.3.0", true], // one minor newer
    ["0.2.0", "0.0.4", false], // two older
    ["0.2.0", "0.4.0", false], // two newer
    ["1.0.0", "0.9.0", false], // another major, however close
    ["1.9.0", "2.0.0", false],
  ])("console %s, agent %s: compatible %s", (console, agent, compatible) => {
    expect(versionSkew(console, agent).compatible).toBe(compatible);
  });

  it("says which side to upgrade, naming both versions", () => {
    expect(versionSkew("0.3.0", "0.1.0").reason).toBe(
      "tide-agent 0.1.0 is 2 minor versions older than the console (0.3.0): an agent may be at most 1 " +
        "minor version older or newer than its console. Upgrade the agent.",
    );
    expect(versionSkew("0.1.0", "0.3.0").reason).toMatch(/2 minor versions newer .* Upgrade the console\.$/);
    expect(versionSkew("2.0.0", "1.9.0").reason).toMatch(/another major version .* Upgrade the agent\.$/);
  });

  it("refuses a version that is not a release, saying whose", () => {
    expect(versionSkew("0.1.0", "dev")).toEqual({
      compatible: false,
      reason: 'The agent version "dev" is not a release version (major.minor.patch).',
    });
  });
});
