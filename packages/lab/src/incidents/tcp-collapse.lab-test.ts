/**
 * Incident tcp-collapse (root): a slow reader fed 1-byte segments with a 32 MiB tcp_rmem makes TcpExt
 * PruneCalled and TCPRcvCollapsed rise in the server namespace. remedy() (tcp_rmem max 1 MiB)
 * makes prunes far rarer; collapsing itself continues (see tcp-collapse.ts), so that is what is
 * asserted, not a stop.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kernelIncident } from "@tide/contracts";
import { setup, type TcpCollapseHandle, TCP_COLLAPSE_PREFIX } from "./tcp-collapse";
import { counterDelta, readNetCounters } from "./namespace";
import { listNamespaces } from "../host-command";

describe(`incident ${kernelIncident("tcp-collapse").number}: tcp_collapse with a large tcp_rmem`, () => {
  let h: TcpCollapseHandle;
  let prunesLarge = 0;
  beforeAll(async () => {
    h = await setup();
  });
  afterAll(async () => {
    await h?.teardown();
    expect((await listNamespaces()).filter((n) => n.startsWith(TCP_COLLAPSE_PREFIX))).toEqual([]);
  });

  // The finding opens on either rate (packages/diagnostics' tcp-collapse rule), and PruneCalled is
  // the one this reproduction drives every time. Whether the kernel also collapses (TCPRcvCollapsed)
  // in a given 3 s depends on memory accounting it does not expose: seen in busy CI runs, PruneCalled
  // +18,286 per run and TCPRcvCollapsed +0 over two runs, then +415,890 collapses in the remedy
  // phase. So prunes are asserted; collapses are tried for up to three runs and printed.
  it("prunes the receive queue (the incident's signal); collapses are printed", async () => {
    expect(await h.rmem()).toBe("4096 131072 33554432");
    const before = await readNetCounters(h.namespaces.server.name);
    const sent = [await h.trigger({ durationMs: 3_000, writeSize: 1, connections: 4 })];
    let after = await readNetCounters(h.namespaces.server.name);
    while (counterDelta(before, after, "TcpExt", "TCPRcvCollapsed") <= 100 && sent.length < 3) {
      sent.push(await h.trigger({ durationMs: 3_000, writeSize: 1, connections: 4 }));
      after = await readNetCounters(h.namespaces.server.name);
    }
    prunesLarge = counterDelta(before, after, "TcpExt", "PruneCalled") / sent.length;
    const collapsed = counterDelta(before, after, "TcpExt", "TCPRcvCollapsed");
    console.log(
      `[tcp-collapse] rmem 32M: ${JSON.stringify(sent)} PruneCalled +${prunesLarge} per run TCPRcvCollapsed +${collapsed}`,
    );
    expect(prunesLarge).toBeGreaterThan(100);
  });

  it("remedy: a smaller tcp_rmem makes prunes far rarer", async () => {
    await h.remedy();
    expect(await h.rmem()).toBe("4096 131072 1048576");
    const before = await readNetCounters(h.namespaces.server.name);
    const sent = await h.trigger({ durationMs: 3_000, writeSize: 1, connections: 4 });
    const after = await readNetCounters(h.namespaces.server.name);
    const prunes = counterDelta(before, after, "TcpExt", "PruneCalled");
    const collapsed = counterDelta(before, after, "TcpExt", "TCPRcvCollapsed");
    console.log(
      `[tcp-collapse] rmem 1M: ${JSON.stringify(sent)} PruneCalled +${prunes} TCPRcvCollapsed +${collapsed}`,
    );
    expect(prunes).toBeLessThan(prunesLarge / 3);
  });
});
