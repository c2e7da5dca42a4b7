import { readFileSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "@tide/devstack";
import { describe, expect, it } from "vitest";
import { AGENT_VERSION } from "./version";

describe("AGENT_VERSION", () => {
  it("is the root package.json's version when the sources run from the checkout", () => {
    const root = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as {
      version: string;
    };
    expect(AGENT_VERSION).toBe(root.version);
    expect(AGENT_VERSION).toMatch(/^\d+\.\d+\.\d+/);
  });
});
