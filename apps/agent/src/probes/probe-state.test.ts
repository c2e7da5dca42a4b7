import { describe, expect, it } from "vitest";
import {
  PROBES_BUCKET_LO_US as LO,
  PROBES_HELLO as HELLO,
  PROBES_LISTEN as LISTEN,
  PROBES_SAMPLE as SAMPLE,
} from "@tide/contracts/testing";
import { offReason, ProbeState, rebucket } from "./probe-state";

describe("ProbeState", () => {
  it("reports every probe off before hello", () => {
    const s = new ProbeState();
    expect(s.probes().every((p) => p.state === "off")).toBe(true);
  });

  it("maps loader probes to contract probes and folds the latest sample", () => {
    const s = new ProbeState();
    s.handle(HELLO);
    const byName = Object.fromEntries(s.probes().map((p) => [p.probe, p]));
    expect(byName.listen_capped).toMatchObject({ state: "on", startedAt: new Date(HELLO.at).toISOString() });
    expect(byName.icmp_frag_needed).toMatchObject({ state: "off", reason: "tracepoint_missing" });
    s.handle(SAMPLE);
    s.handle({ ...LISTEN, at: 1 });
    const r = s.probeResults();
    expect(r.listenOverflow).toEqual([{ netnsInode: 4026532000, port: 8080, drops: 17 }]);
    expect(r.connectLatency).toEqual([
      {
        netnsInode: 4026531833,
        pid: 42,
        comm: "curl",
        latencyUs: [1, 1, 0, 0, 1],
        eaddrnotavail: 1,
        evenPorts: 2,
        oddPorts: 1,
      },
    ]);
    expect(r.netRxSoftirq).toEqual([{ cpu: 1, durationUs: [3, 2], intervalMaxUs: 7 }]);
    expect(r.listenCapped).toEqual([
      { netnsInode: 4026532000, port: 8080, pid: 77, comm: "server", requested: 1024, effective: 128 },
    ]);
    expect(r.icmpFragNeeded).toEqual([]);
    // the listener closed: it disappears from listenCapped
    expect(s.probeResults(new Set()).listenCapped).toEqual([]);
  });

  it("refuses a line that is not a ProbesLine, and it changes nothing", () => {
    const s = new ProbeState();
    s.handle(HELLO);
    s.handle(SAMPLE);
    const before = s.probeResults();
    expect(s.handle({ ...SAMPLE, netrx: [{ ...SAMPLE.netrx[0], max_us: -1 }] })).toMatch(/^netrx\.0\.max_us/);
    expect(s.handle({ type: "hello", at: 1 })).not.toBeNull();
    expect(s.handle({ type: "goodbye" })).not.toBeNull();
    expect(s.handle("x")).not.toBeNull();
    expect(s.probeResults()).toEqual(before);
    expect(s.probes().every((p) => p.probe === "icmp_frag_needed" || p.state === "on")).toBe(true);
    expect(s.handle(SAMPLE)).toBeNull();
  });

  it("setOff clears results", () => {
    const s = new ProbeState();
    s.handle(HELLO);
    s.handle(SAMPLE);
    s.setOff("loader_crashed", "exited");
    expect(s.probeResults().listenOverflow).toEqual([]);
    expect(s.probes()[0]).toMatchObject({ state: "off", reason: "loader_crashed" });
  });
});

describe("ProbeState: net_rx_softirq from pinned maps", () => {
  const cpu1 = {
    cpu: 1,
    runs: 9,
    totalUs: 40,
    maxUs: 3,
    hist: [2, 3, 4],
    waits: 0,
    waitTotalUs: 0,
    waitMaxUs: 0,
    waitHist: [],
  };

  it("takes the map's histogram and the larger of its peak and the last sample's max_us", () => {
    const pinErrors: (string | null)[] = [];
    const s = new ProbeState(undefined, (pinError) => {
      pinErrors.push(pinError);
      return [cpu1, { ...cpu1, cpu: 0, hist: [1], maxUs: 0 }];
    });
    s.handle({ ...HELLO, pin_dir: "/sys/fs/bpf/tp" });
    s.handle(SAMPLE); // cpu 1: max_us 7 in the last full interval
    expect(s.probeResults().netRxSoftirq).toEqual([
      { cpu: 1, durationUs: [5, 4], intervalMaxUs: 7 },
      { cpu: 0, durationUs: [1], intervalMaxUs: 0 },
    ]);
    expect(pinErrors).toEqual([null]);
    s.handle({ ...SAMPLE, netrx: [{ ...SAMPLE.netrx[0], max_us: 1 }] });
    expect(s.probeResults().netRxSoftirq[0]).toMatchObject({ intervalMaxUs: 3 });
  });

  it("keeps the JSON sample when the reader says null, and passes the hello's pin error", () => {
    const pinErrors: (string | null)[] = [];
    const s = new ProbeState(undefined, (pinError) => {
      pinErrors.push(pinError);
      return null;
    });
    s.handle({ ...HELLO, pin_dir: "/p", pin_error: "cannot pin maps in /p: File exists" });
    s.handle(SAMPLE);
    expect(s.probeResults().netRxSoftirq).toEqual([{ cpu: 1, durationUs: [3, 2], intervalMaxUs: 7 }]);
    s.handle(HELLO); // no --pin-dir
    s.probeResults();
    expect(pinErrors).toEqual([
      "cannot pin maps in /p: File exists",
      "tide-probes said no pin_dir in its hello",
    ]);
  });

  it("does not read the maps while the probe is off", () => {
    let reads = 0;
    const s = new ProbeState(undefined, () => {
      reads++;
      return [cpu1];
    });
    s.handle({ ...HELLO, probes: { ...HELLO.probes, netrx_softirq: { on: false, reason: "btf" } } });
    expect(s.probeResults().netRxSoftirq).toEqual([]);
    expect(reads).toBe(0);
  });
});

describe("rebucket", () => {
  it("merges [0,1) and [1,2) into bucket 0 and shifts the rest", () => {
    expect(rebucket([1, 2, 3, 4], LO)).toEqual([3, 3, 4]);
    expect(rebucket([0, 0, 0], LO)).toEqual([]);
  });
});

describe("offReason", () => {
  it("maps loader texts to the closed set", () => {
    expect(offReason("Operation not permitted (EPERM)")).toBe("missing_privilege");
    expect(offReason("no kernel BTF")).toBe("btf_missing");
    expect(offReason("verifier rejected")).toBe("load_failed");
  });
});
