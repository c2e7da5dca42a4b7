import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { PROBES_HELLO } from "@tide/contracts/testing";
import { waitFor } from "@tide/devstack";
import { afterEach, describe, expect, it } from "vitest";
import { ProbeLoader } from "./loader";

/** A hello of tide-probes with every probe on. */
const HELLO = { ...PROBES_HELLO, probes: { ...PROBES_HELLO.probes, icmp_frag_needed: { on: true } } };

let dir: string | null = null;
let loader: ProbeLoader | null = null;
afterEach(() => {
  loader?.stop();
  if (dir !== null) rmSync(dir, { recursive: true, force: true });
  loader = dir = null;
});

describe("ProbeLoader", () => {
  it("skips lines that are not the contract's, counts and logs them, and takes the good ones", async () => {
    // A stand-in tide-probes: junk, a hello with a bad field, then a real hello; it stays up.
    dir = mkdtempSync(path.join(tmpdir(), "tide-probes-"));
    const binary = path.join(dir, "tide-probes");
    writeFileSync(
      binary,
      [
        "#!/bin/sh",
        "echo 'libbpf: not json'",
        `echo '${JSON.stringify({ ...HELLO, at: "now" })}'`,
        `echo '${JSON.stringify(HELLO)}'`,
        "exec sleep 30",
      ].join("\n"),
    );
    chmodSync(binary, 0o755);
    const logged: string[] = [];
    loader = new ProbeLoader(binary, 1000, (line) => logged.push(line));
    await loader.start();
    const l = loader;
    await waitFor("the hello", () => l.state.probes().every((p) => p.state === "on"), {
      timeoutMs: 5000,
      intervalMs: 20,
    });
    expect(loader.refused).toBe(2);
    expect(logged).toEqual(["tide-probes: skipped a line that is not JSON: libbpf: not json (1 so far)"]);
  });
});
