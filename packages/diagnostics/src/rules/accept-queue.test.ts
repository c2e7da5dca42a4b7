import type { Observation } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import {
  CONTAINER,
  ROOT,
  WEB,
  minute,
  namespace,
  probesOn,
  sample,
  series,
} from "../__fixtures__/observations";
import { diagnose } from "../diagnose";

const overflow = (obs: Observation[]) => diagnose(obs).filter((f) => f.kind === "accept_queue_overflow");
const capped = (obs: Observation[]) => diagnose(obs).filter((f) => f.kind === "listen_backlog_capped");

describe("accept_queue_overflow", () => {
  it("finds a namespace-wide overflow from the ListenOverflows rate when no port is known", () => {
    const [f, ...rest] = overflow(
      minute((t) => sample(t, { namespaces: [namespace(t, { ratePerS: { TcpExtListenOverflows: 3 } })] })),
    );
    expect(rest).toHaveLength(0);
    expect(f!.severity).toBe("warn");
    expect(f!.subject.netns).toEqual(ROOT);
    expect(f!.subject.port).toBeNull();
    expect(f!.evidence[0]).toMatchObject({
      metric: "TcpExtListenOverflows",
      value: 3,
      ratePerSecond: 3,
      threshold: { warn: 1, critical: 5 },
      window: { seconds: 60 },
    });
    // Root namespace: plain sysctl; the backlog in use (4096) doubled.
    expect(f!.remedy.steps.map((s) => s.command)).toContain("sysctl -w net.core.somaxconn=8192");
  });

  it("states the rate and the window the evidence shows, also before a full minute of samples", () => {
    // 31 samples a second apart: the rate covers 30 s, not the 60 s the window may hold.
    const obs = minute((t) =>
      sample(t, { namespaces: [namespace(t, { ratePerS: { TcpExtListenOverflows: 2.5 } })] }),
    ).slice(0, 31);
    const [f] = overflow(obs);
    expect(f!.evidence[0]).toMatchObject({ value: 2.5, ratePerSecond: 2.5, window: { seconds: 30 } });
    expect(f!.explanation).toContain("2.5 connections per second (over the last 30 s)");
    expect(f!.explanation).not.toContain("1-minute");
  });

  it.each([
    [0.9, null],
    [1, null],
    [1.1, "warn"],
    [5, "warn"],
    [5.1, "critical"],
  ])("ListenOverflows at %s/s gives severity %s", (perS, severity) => {
    const obs = minute((t) =>
      sample(t, {
        namespaces: [namespace(t, { counters: { TcpExtListenOverflows: Math.round(perS * t) } })],
      }),
    );
    // Samples every 10 s keep the integer counter exact (1.1/s = 11 per sample).
    const found = overflow(obs.filter((_, t) => t % 10 === 0));
    expect(found[0]?.severity ?? null).toBe(severity);
  });

  it("attributes to the port whose Recv-Q exceeds Send-Q, and says the namespace's somaxconn differs", () => {
    const obs = minute((t) =>
      sample(t, {
        namespaces: [
          namespace(t, { somaxconn: 65535 }),
          namespace(t, {
            netns: WEB,
            somaxconn: 4096,
            ratePerS: { TcpExtListenOverflows: 8 },
            listeners: [
              {
                address: "0.0.0.0",
                port: 8080,
                recvQ: t % 2 === 0 ? 11 : 10,
                sendQ: 10,
                requestedBacklog: 10,
              },
              { address: "0.0.0.0", port: 9090, recvQ: 0, sendQ: 4096, requestedBacklog: null },
            ],
          }),
        ],
      }),
    );
    const [f, ...rest] = overflow(obs);
    expect(rest).toHaveLength(0);
    expect(f!.severity).toBe("critical");
    expect(f!.subject).toMatchObject({ netns: WEB, port: 8080 });
    expect(f!.evidence.map((e) => e.metric)).toEqual(
      expect.arrayContaining(["TcpExtListenOverflows", "ss.listen.recv_q", "ss.listen.send_q"]),
    );
    expect(f!.explanation).toContain("Recv-Q 11");
    expect(f!.explanation).toMatch(/Namespace web has 4096 \(the kernel default.*not the host's 65535/);
    // The app's listen(10) is the limit, not somaxconn: the remedy is the backlog, no sysctl needed.
    expect(f!.remedy.steps[0]!.action).toContain("listen(fd, 1024)");
    expect(f!.remedy.steps.some((s) => s.command?.includes("sysctl"))).toBe(false);
  });

  it("uses per-port probe rates: only ports over the threshold, severity from the port", () => {
    const obs = minute((t) =>
      sample(t, {
        namespaces: [namespace(t), namespace(t, { netns: WEB, ratePerS: { TcpExtListenOverflows: 6.5 } })],
        probeResults: {
          listenOverflow: [
            { netnsInode: WEB.inode, port: 8080, drops: 120 + 2 * t },
            { netnsInode: WEB.inode, port: 9090, drops: Math.floor(t / 2) },
          ],
        },
      }),
    );
    const found = overflow(obs);
    expect(found.map((f) => [f.subject.port, f.severity])).toEqual([[8080, "warn"]]);
    expect(found[0]!.evidence[0]).toMatchObject({ metric: "probe.listen_overflow.drops", value: 2 });
    expect(found[0]!.remedy.steps[0]!.command).toBeNull();
  });

  it("makes no finding from a single sample, a short window or a counter reset", () => {
    const hot = (t: number) =>
      sample(t, { namespaces: [namespace(t, { ratePerS: { TcpExtListenOverflows: 50 } })] });
    expect(overflow([hot(0)])).toEqual([]);
    expect(overflow(series(5, hot))).toEqual([]);
    const reset = minute((t) =>
      sample(t, {
        namespaces: [namespace(t, { counters: { TcpExtListenOverflows: t < 30 ? 9_000_000 : t - 30 } })],
      }),
    );
    expect(overflow(reset)).toEqual([]);
  });

  it("keeps the same id across evaluations", () => {
    const make = (t: number) =>
      sample(t, { namespaces: [namespace(t, { ratePerS: { TcpExtListenOverflows: 3 } })] });
    const a = overflow(series(61, make));
    const b = overflow(series(121, make).slice(60));
    expect(a[0]!.id).toBe(b[0]!.id);
    expect(a[0]!.lastSeenAt).not.toBe(b[0]!.lastSeenAt);
  });
});

describe("listen_backlog_capped", () => {
  const cappedSocket = (pid = 4242) => ({
    listenCapped: [
      { netnsInode: CONTAINER.inode, port: 8443, pid, comm: "envoy", requested: 65535, effective: 4096 },
    ],
  });

  it("reports a capped listen() in an unnamed namespace with an nsenter remedy", () => {
    const obs = [0, 30, 60].map((t) =>
      sample(t, {
        namespaces: [
          namespace(t, { somaxconn: 65535 }),
          namespace(t, { netns: CONTAINER, pids: [4242, 4250] }),
        ],
        probeResults: cappedSocket(),
      }),
    );
    const [f] = capped(obs);
    expect(f!.severity).toBe("info");
    expect(f!.subject).toMatchObject({ netns: CONTAINER, port: 8443, process: { pid: 4242, comm: "envoy" } });
    expect(f!.evidence.slice(0, 3).map((e) => [e.metric, e.value])).toEqual([
      ["probe.listen_capped.requested", 65535],
      ["probe.listen_capped.effective", 4096],
      ["net.core.somaxconn", 4096],
    ]);
    expect(f!.remedy.steps[0]!.command).toBe(
      "nsenter --net=/proc/4242/ns/net sysctl -w net.core.somaxconn=65535",
    );
    expect(f!.explanation).toContain("the kernel default every new namespace starts with");
  });

  it("is warn when the namespace also overflows", () => {
    const obs = minute((t) =>
      sample(t, {
        namespaces: [
          namespace(t),
          namespace(t, { netns: CONTAINER, ratePerS: { TcpExtListenOverflows: 2 } }),
        ],
        probeResults: cappedSocket(),
      }),
    );
    expect(capped(obs)[0]!.severity).toBe("warn");
  });

  it("keeps its id when the process restarts with a new pid", () => {
    const mk = (pid: number) =>
      capped([
        sample(0, {
          namespaces: [namespace(0), namespace(0, { netns: CONTAINER })],
          probeResults: cappedSocket(pid),
        }),
      ]);
    expect(mk(4242)[0]!.id).toBe(mk(9000)[0]!.id);
  });

  it("says nothing when the listen probe is off", () => {
    const obs = [
      sample(0, {
        namespaces: [namespace(0), namespace(0, { netns: CONTAINER })],
        probes: probesOn(["listen_overflow", "connect_latency"]),
        probeResults: cappedSocket(),
      }),
    ];
    expect(capped(obs)).toEqual([]);
  });
});
