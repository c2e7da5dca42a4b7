import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { PmtuProber, type Exec } from "./prober";

const fixture = (name: string) => readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), "utf8");

const exec: Exec = async (file, args) =>
  file === "tracepath" || args.includes("tracepath")
    ? { output: fixture("tracepath-pmtu-drop.txt"), timedOut: false, error: null }
    : { output: fixture("ping-ok.txt"), timedOut: false, error: null };

afterEach(() => {
  vi.useRealTimers();
});

describe("PmtuProber", () => {
  it("checks each target in the background on a jittered interval and forgets removed targets", async () => {
    vi.useFakeTimers();
    const calls: string[] = [];
    const logs: string[] = [];
    const p = new PmtuProber({
      intervalMs: 60_000,
      log: (l) => logs.push(l),
      random: () => 0.5,
      exec: (f, a, t) => {
        calls.push(a.at(-1)!);
        return exec(f, a, t);
      },
    });
    p.setTargets([{ target: "10.231.3.2", sizes: [1400] }]);
    expect(p.results()).toEqual([]); // nothing ran yet: sampling never waits for a check
    await vi.advanceTimersByTimeAsync(5_000);
    expect(p.results()).toMatchObject([{ target: "10.231.3.2", pmtu: 1200, hops: 3, blackhole: false }]);
    const first = calls.length;
    expect(first).toBe(3); // tracepath + ping 56 + ping 1400
    await vi.advanceTimersByTimeAsync(59_000);
    expect(calls.length).toBe(first);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls.length).toBe(2 * first);
    p.setTargets([]);
    expect(p.results()).toEqual([]);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(calls.length).toBe(2 * first);
    p.stop();
    expect(logs).toEqual([]);
  });
});
