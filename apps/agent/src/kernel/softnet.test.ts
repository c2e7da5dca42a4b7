import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cpuObservations, parseSoftirqsNetRx, parseSoftnetStat } from "./softnet";

const fixture = (name: string): string =>
  readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), "utf8");

describe("parseSoftnetStat", () => {
  it("reads hex columns and the CPU id column of a real softnet_stat", () => {
    const rows = parseSoftnetStat(fixture("softnet_stat.txt"));
    expect(rows.map((r) => r.cpu)).toEqual([0, 1]);
    expect(rows[1]).toMatchObject({ dropped: 0, timeSqueeze: 1 });
    expect(rows[0]!.processed).toBeGreaterThan(0);
  });

  it("numbers CPUs by line when the CPU column is absent (old kernels)", () => {
    const rows = parseSoftnetStat(
      "0000000a 00000002 00000003 00000000 00000000\n000000ff 00000000 00000010 00000000 00000000\n",
    );
    expect(rows).toEqual([
      { cpu: 0, processed: 10, dropped: 2, timeSqueeze: 3 },
      { cpu: 1, processed: 255, dropped: 0, timeSqueeze: 16 },
    ]);
  });

  it("uses the CPU column when CPUs are offline (ids skip)", () => {
    const line = (cpu: number): string =>
      `00000001 00000000 00000000 ${"00000000 ".repeat(9)}${cpu.toString(16).padStart(8, "0")} 00000000 00000000`;
    expect(parseSoftnetStat(`${line(0)}\n${line(3)}\n`).map((r) => r.cpu)).toEqual([0, 3]);
  });
});

describe("parseSoftirqsNetRx", () => {
  it("reads NET_RX per CPU from a real /proc/softirqs", () => {
    const m = parseSoftirqsNetRx(fixture("softirqs.txt"));
    expect([...m.keys()]).toEqual([0, 1]);
    expect(m.get(0)).toBeGreaterThan(0);
  });

  it("joins softnet rows and NET_RX counts", () => {
    const text = "                    CPU0       CPU1\n      NET_RX:     750148    1003173\n";
    const cpus = cpuObservations(
      parseSoftnetStat("0000000a 00000002 00000003\n0000000b 00000000 00000000\n"),
      parseSoftirqsNetRx(text),
    );
    expect(cpus).toEqual([
      { cpu: 0, softnetProcessed: 10, softnetDropped: 2, softnetTimeSqueeze: 3, netRxSoftirqs: 750148 },
      { cpu: 1, softnetProcessed: 11, softnetDropped: 0, softnetTimeSqueeze: 0, netRxSoftirqs: 1003173 },
    ]);
  });
});
