/**
 * Incident accept-queue (root): ListenOverflows rises in the server namespace while a slow acceptor's capped
 * backlog (ss Send-Q = somaxconn) overflows; after remedy() Send-Q is the requested backlog and the
 * counter stops rising.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kernelIncident } from "@tide/contracts";
import { setup, type AcceptQueueHandle, ACCEPT_QUEUE_PREFIX } from "./accept-queue";
import { counterDelta, readNetCounters } from "./namespace";
import { listNamespaces } from "../host-command";

describe(`incident ${kernelIncident("accept-queue").number}: accept queue overflow`, () => {
  let h: AcceptQueueHandle;
  beforeAll(async () => {
    h = await setup({ requestedBacklog: 1024, somaxconn: 10, acceptIntervalMs: 500 });
  });
  afterAll(async () => {
    await h?.teardown();
    expect((await listNamespaces()).filter((n) => n.startsWith(ACCEPT_QUEUE_PREFIX))).toEqual([]);
  });

  it("caps the backlog at the namespace's somaxconn and overflows", async () => {
    const l = await h.listener();
    expect(l.sendQ).toBe(10);
    const before = await readNetCounters(h.namespaces.server.name);
    const burst = await h.trigger({ count: 300, durationMs: 2_000 });
    const after = await readNetCounters(h.namespaces.server.name);
    const overflows = counterDelta(before, after, "TcpExt", "ListenOverflows");
    console.log(`[accept-queue] burst ${JSON.stringify(burst)} ListenOverflows +${overflows}`);
    expect(burst.attempted).toBe(300);
    expect(overflows).toBeGreaterThan(50);
    expect(counterDelta(before, after, "TcpExt", "ListenDrops")).toBeGreaterThanOrEqual(overflows);
  });

  it("remedy: raised somaxconn, re-listened, no more overflows", async () => {
    await h.remedy();
    const l = await h.listener();
    expect(l.sendQ).toBe(1024);
    const before = await readNetCounters(h.namespaces.server.name);
    const burst = await h.trigger({ count: 300, durationMs: 2_000 });
    const after = await readNetCounters(h.namespaces.server.name);
    const overflows = counterDelta(before, after, "TcpExt", "ListenOverflows");
    console.log(`[accept-queue] after remedy ${JSON.stringify(burst)} ListenOverflows +${overflows}`);
    expect(overflows).toBe(0);
    expect(burst.connected).toBe(300);
  });
});
