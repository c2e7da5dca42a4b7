import { readFileSync } from "node:fs";
import { PmtuPathResult } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { decidePmtu, parsePing, parseTracepath, type PingResult, type TracepathResult } from "./parse";
import { checkTarget, mergeTargets, tracepathCommand, validTarget, type Exec } from "./prober";

const fixture = (name: string) => readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), "utf8");
const AT = "2026-11-22T23:00:00.000Z";

describe("parseTracepath", () => {
  it("blackhole: no reply hops and Too many hops: pmtu 1500", () => {
    const r = parseTracepath(fixture("tracepath-blackhole.txt"));
    expect(r).toMatchObject({ localMtu: 1500, pmtu: 1500, reached: false, hops: null, tooManyHops: true });
    expect(r.noReplyHops).toBe(6);
    expect(r.evidence).toContain("3:  no reply");
    expect(r.evidence).toContain("Too many hops: pmtu 1500");
  });

  it("pmtu drop on a hop, reached, Resume: pmtu N hops H back B", () => {
    const r = parseTracepath(fixture("tracepath-pmtu-drop.txt"));
    expect(r).toMatchObject({ localMtu: 1500, pmtu: 1200, reached: true, hops: 3, noReplyHops: 0 });
    expect(r.hopLines.find((h) => h.pmtu === 1200)?.address).toBe("10.231.1.1");
  });

  it("tokens in any order (reached asymm N, asymm then pmtu) and a no reply in the middle", () => {
    const r = parseTracepath(fixture("tracepath-asymm.txt"));
    expect(r).toMatchObject({ localMtu: 9001, pmtu: 1500, reached: true, hops: 4, noReplyHops: 1 });
    expect(r.hopLines.at(-1)).toMatchObject({ hop: 4, address: "198.51.100.20", reached: true });
  });

  it("loopback (measured on this host): no LOCALHOST line", () => {
    const r = parseTracepath(fixture("tracepath-loopback.txt"));
    expect(r).toMatchObject({ localMtu: null, pmtu: 65535, reached: true, hops: 1 });
  });

  it("unreached without footer (killed by the timeout): pmtu falls back to LOCALHOST's", () => {
    const r = parseTracepath(" 1?: [LOCALHOST]  pmtu 1500\n 1:  10.0.0.1  0.3ms \n 2:  no reply\n");
    expect(r).toMatchObject({ localMtu: 1500, pmtu: 1500, reached: false, hops: null, noReplyHops: 1 });
  });

  it("garbage and empty input do not throw", () => {
    expect(parseTracepath("")).toMatchObject({ localMtu: null, pmtu: null, reached: false });
    expect(parseTracepath("tracepath: 10.0.0.1: Name or service not known\n\u0000x:y")).toMatchObject({
      reached: false,
      hopLines: [],
    });
  });
});

describe("parsePing", () => {
  it("all replies", () => {
    expect(parsePing(56, fixture("ping-ok.txt"))).toMatchObject({
      transmitted: 3,
      received: 3,
      silent: false,
      fragNeededMtu: null,
    });
  });
  it("100% loss with no error line is silent", () => {
    const r = parsePing(1400, fixture("ping-silent-loss.txt"));
    expect(r).toMatchObject({ transmitted: 3, received: 0, silent: true, fragNeededMtu: null });
  });
  it("Frag needed and DF set (mtu = N) from a router", () => {
    const r = parsePing(1400, fixture("ping-frag-needed.txt"));
    expect(r).toMatchObject({ received: 0, silent: false, fragNeededMtu: 1200, fragNeededFrom: "router" });
    expect(r.evidence[0]).toBe("From 10.231.1.1 icmp_seq=1 Frag needed and DF set (mtu = 1200)");
  });
  it("local error: message too long (our own route MTU, measured on this host)", () => {
    const r = parsePing(1400, fixture("ping-local-too-long.txt"));
    expect(r).toMatchObject({ received: 0, silent: false, fragNeededMtu: 1400, fragNeededFrom: "local" });
  });
  it("partial loss with a fractional percentage", () => {
    expect(parsePing(1472, fixture("ping-partial.txt"))).toMatchObject({ transmitted: 3, received: 1 });
  });
  it("no statistics at all (killed) is not silent loss", () => {
    expect(parsePing(1400, "PING 10.0.0.1 (10.0.0.1) 1400(1428) bytes of data.\n").silent).toBe(false);
  });
});

const tp = (name: string): TracepathResult => parseTracepath(fixture(name));
const ping = (size: number, name: string): PingResult => parsePing(size, fixture(name));

describe("decidePmtu", () => {
  it("blackhole: small reaches, 1400 DF silently lost under a claimed 1500", () => {
    const r = decidePmtu({
      target: "10.231.3.2",
      measuredAt: AT,
      tracepath: tp("tracepath-blackhole.txt"),
      pings: [ping(56, "ping-ok.txt"), ping(1400, "ping-silent-loss.txt")],
    });
    expect(PmtuPathResult.parse(r)).toEqual(r);
    expect(r).toMatchObject({
      method: "ping",
      localMtu: 1500,
      pmtu: 1500,
      reached: true,
      blackhole: true,
      hops: null,
    });
    expect(r.evidence).toMatch(/^blackhole: 56-byte probes reach 10\.231\.3\.2; DF probes of 1428 bytes/);
    expect(r.evidence).toContain("Too many hops: pmtu 1500");
    expect(r.evidence).toContain("100% packet loss");
  });

  it("no blackhole when the router says Frag needed: pmtu is the router's", () => {
    const r = decidePmtu({
      target: "10.231.3.2",
      measuredAt: AT,
      tracepath: tp("tracepath-pmtu-drop.txt"),
      pings: [ping(56, "ping-ok.txt"), ping(1400, "ping-frag-needed.txt")],
    });
    expect(r).toMatchObject({ method: "tracepath", pmtu: 1200, hops: 3, reached: true, blackhole: false });
  });

  it("no blackhole when nothing reaches the target (down, not a blackhole)", () => {
    const r = decidePmtu({
      target: "10.9.9.9",
      measuredAt: AT,
      tracepath: tp("tracepath-too-many.txt"),
      pings: [parsePing(56, fixture("ping-silent-loss.txt")), ping(1400, "ping-silent-loss.txt")],
    });
    expect(r).toMatchObject({ reached: false, blackhole: false, hops: null, pmtu: 1500 });
  });

  it("a silent probe larger than the claimed MTU is not a blackhole", () => {
    const r = decidePmtu({
      target: "10.231.3.2",
      measuredAt: AT,
      tracepath: tp("tracepath-pmtu-drop.txt"),
      pings: [ping(56, "ping-ok.txt"), ping(1400, "ping-silent-loss.txt")],
    });
    expect(r.blackhole).toBe(false);
  });

  it("tracepath alone (no large pings configured): stuck tracepath + small reach = blackhole", () => {
    const r = decidePmtu({
      target: "10.231.3.2",
      measuredAt: AT,
      tracepath: tp("tracepath-blackhole.txt"),
      pings: [ping(56, "ping-ok.txt")],
    });
    expect(r).toMatchObject({ method: "tracepath", blackhole: true });
    expect(r.evidence).toMatch(/no reply past hop 2/);
  });
});

describe("checkTarget / targets", () => {
  it("runs tracepath and the pings with timeouts and folds tool failures into evidence", async () => {
    const calls: string[] = [];
    const exec: Exec = async (file, args, timeoutMs) => {
      calls.push(`${file} ${args.join(" ")} <${timeoutMs}>`);
      if (file === "tracepath" || args.includes("tracepath"))
        return { output: fixture("tracepath-blackhole.txt"), timedOut: true, error: null };
      const size = Number(args[args.indexOf("-s") + 1]);
      return {
        output: fixture(size === 56 ? "ping-ok.txt" : "ping-silent-loss.txt"),
        timedOut: false,
        error: null,
      };
    };
    const r = await checkTarget({ target: "10.231.3.2", sizes: [1400] }, exec, () => new Date(AT));
    expect(calls).toContain("ping -n -c 3 -W 1 -s 56 10.231.3.2 <11000>");
    expect(calls).toContain("ping -M do -n -c 3 -W 1 -s 1400 10.231.3.2 <11000>");
    expect(calls.find((c) => c.includes("tracepath"))).toMatch(/tracepath -n -m 12 10\.231\.3\.2 <40000>$/);
    expect(r.blackhole).toBe(true);
    expect(r.evidence).toMatch(/tracepath: timed out/);
    expect(r.evidence).toContain("tracepath: Too many hops: pmtu 1500");
  });

  it("runs tracepath line-buffered when stdbuf exists", () => {
    expect(tracepathCommand(["-n", "x"], "/usr/bin/stdbuf")).toEqual([
      "/usr/bin/stdbuf",
      ["-oL", "tracepath", "-n", "x"],
    ]);
    expect(tracepathCommand(["-n", "x"], null)).toEqual(["tracepath", ["-n", "x"]]);
  });

  it("merges configured and desired targets and refuses option-like targets", () => {
    expect(
      mergeTargets(
        ["10.0.0.1", "-f"],
        [1400],
        [
          { target: "10.0.0.1", sizes: [1200] },
          { target: "db.internal", sizes: [8972] },
        ],
      ),
    ).toEqual([
      { target: "10.0.0.1", sizes: [1200, 1400] },
      { target: "db.internal", sizes: [8972] },
    ]);
    expect(validTarget("-rf")).toBe(false);
    expect(validTarget("2001:db8::1")).toBe(true);
  });
});
