import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkoutRoots, findHelper, findHelpers } from "./binaries";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "tide-binaries-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Create `rel` under the temp dir, executable or not. */
function file(rel: string, mode = 0o755): string {
  const p = path.join(dir, rel);
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, "#!/bin/sh\n");
  chmodSync(p, mode);
  return p;
}

describe("findHelper", () => {
  it("uses a configured path as given, even a missing one", () => {
    const search = { installedDir: path.join(dir, "usr/lib/tide"), checkoutRoots: [path.join(dir, "repo")] };
    file("usr/lib/tide/tide-probes");
    expect(findHelper("tide-probes", "/nowhere/tide-probes", search)).toMatchObject({
      path: "/nowhere/tide-probes",
      source: "configured",
    });
  });

  it("prefers the installed helper to the checkout's build", () => {
    const installed = file("usr/lib/tide/tide-nsdiag");
    file("repo/dataplane/build/tide-nsdiag");
    const search = { installedDir: path.join(dir, "usr/lib/tide"), checkoutRoots: [path.join(dir, "repo")] };
    expect(findHelper("tide-nsdiag", null, search)).toMatchObject({ path: installed, source: "installed" });
  });

  it("finds the checkout's build when nothing is installed, skipping non-executables", () => {
    file("first/dataplane/build/tide-probes", 0o644);
    const built = file("second/dataplane/build/tide-probes");
    const search = {
      installedDir: path.join(dir, "usr/lib/tide"),
      checkoutRoots: [path.join(dir, "first"), path.join(dir, "second")],
    };
    const choice = findHelper("tide-probes", undefined, search);
    expect(choice).toMatchObject({ path: built, source: "checkout" });
    expect(choice.detail).toContain("built in the checkout");
  });

  it("names every place it looked when none is found", () => {
    const search = { installedDir: path.join(dir, "usr/lib/tide"), checkoutRoots: [path.join(dir, "repo")] };
    const choice = findHelper("tide-probes", null, search);
    expect(choice).toMatchObject({ path: null, source: "not found" });
    expect(choice.detail).toBe(
      `not configured, none executable at ${path.join(dir, "usr/lib/tide/tide-probes")}, ` +
        path.join(dir, "repo/dataplane/build/tide-probes"),
    );
  });
});

describe("findHelpers", () => {
  it("searches each helper the config leaves out, keeps the one it names", () => {
    const nsdiag = file("repo/dataplane/build/tide-nsdiag");
    const search = { installedDir: path.join(dir, "usr/lib/tide"), checkoutRoots: [path.join(dir, "repo")] };
    const found = findHelpers({ probesBinary: "/opt/tide-probes" }, search);
    expect(found.probes).toMatchObject({ path: "/opt/tide-probes", source: "configured" });
    expect(found.nsdiag).toMatchObject({ path: nsdiag, source: "checkout" });
  });
});

describe("checkoutRoots", () => {
  it("finds the root from the bundle and from the source, three levels up", () => {
    const bundle = path.join(dir, "repo/apps/agent/dist/tide-agent.js");
    const source = path.join(dir, "repo/apps/agent/src/binaries.ts");
    expect(checkoutRoots(pathToFileURL(bundle).href, bundle)).toEqual([path.join(dir, "repo")]);
    expect(checkoutRoots(pathToFileURL(source).href, "/usr/bin/tide-agent")).toEqual([
      path.join(dir, "repo"),
      "/",
    ]);
  });

  it("finds this checkout's dataplane/build from the real module", () => {
    expect(checkoutRoots()[0]).toBe(path.resolve(import.meta.dirname, "../../.."));
  });
});
