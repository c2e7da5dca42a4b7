/**
 * Incident pmtu-blackhole (root): with ra dropping its own ICMP frag-needed, `ping -M do -s 1400` loses 100% with
 * no error line while small pings work, tracepath never learns 1200, and ra's OutType3 still rises;
 * after remedy() ping reports "mtu = 1200" and tracepath `pmtu 1200`. The MTU mismatch variant
 * loses big frames from rb to the server silently until remedy() aligns the link.
 */
import { afterAll, describe, expect, it } from "vitest";
import { kernelIncident } from "@tide/contracts";
import { setup, type PmtuHandle, PMTU_PREFIX } from "./pmtu-blackhole";
import { counterDelta, readNetCounters } from "./namespace";
import { listNamespaces } from "../host-command";

describe(`incident ${kernelIncident("pmtu-blackhole").number}: PMTU blackhole`, () => {
  let h: PmtuHandle | undefined;
  afterAll(async () => {
    await h?.teardown();
    expect((await listNamespaces()).filter((n) => n.startsWith(PMTU_PREFIX))).toEqual([]);
  });

  it("blackholes large DF packets while ICMP frag-needed is dropped", async () => {
    h = await setup();
    await h.trigger();
    const small = await h.ping(56);
    expect(small.received).toBe(small.transmitted);
    const before = await readNetCounters(h.namespaces.routerA.name);
    const big = await h.ping(1400);
    const after = await readNetCounters(h.namespaces.routerA.name);
    console.log(`[pmtu] blackhole ping 1400: ${JSON.stringify(big)}`);
    expect(big.transmitted).toBe(3);
    expect(big.received).toBe(0);
    expect(big.errors).toEqual([]);
    expect(counterDelta(before, after, "IcmpMsg", "OutType3")).toBeGreaterThanOrEqual(1);
    const tp = await h.tracepath({ maxHops: 4 });
    console.log(`[pmtu] blackhole tracepath:\n${tp.output}`);
    expect(tp.output).not.toMatch(/pmtu 1200/);
    expect(tp.output).toMatch(/no reply/);
  });

  it("remedy: ICMP allowed, ping and tracepath report mtu 1200", async () => {
    await h!.remedy();
    await h!.flushPmtuCache();
    const big = await h!.ping(1400);
    console.log(`[pmtu] remedied ping 1400: ${JSON.stringify(big)}`);
    expect(big.received).toBe(0);
    expect(big.reportedMtu).toBe(1200);
    await h!.flushPmtuCache();
    const tp = await h!.tracepath({ maxHops: 6 });
    console.log(`[pmtu] remedied tracepath:\n${tp.output}`);
    expect(tp.output).toMatch(/pmtu 1200/);
    expect(tp.reached).toBe(true);
    await h!.teardown();
    h = undefined;
  });

  it("MTU mismatch on the rb-server link drops big frames silently until aligned", async () => {
    h = await setup({ mismatch: true });
    const from = h.namespaces.routerB.name;
    const small = await h.ping(1000, { from });
    expect(small.received).toBe(small.transmitted);
    const big = await h.ping(4000, { from });
    console.log(`[pmtu] mismatch ping 4000 from rb: ${JSON.stringify(big)}`);
    expect(big.received).toBe(0);
    expect(big.errors).toEqual([]);
    await h.remedy();
    const fixed = await h.ping(4000, { from });
    expect(fixed.received).toBe(fixed.transmitted);
  });
});
