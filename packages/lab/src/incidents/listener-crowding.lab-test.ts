/**
 * Incident listener-crowding (root): `ss -ltnH` in the namespace counts 16,000 LISTEN sockets on :53; after
 * remedy() there is one wildcard listener.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kernelIncident } from "@tide/contracts";
import { setup, type ListenerCrowdingHandle, LISTENER_CROWDING_PREFIX } from "./listener-crowding";
import { listNamespaces } from "../host-command";

describe(`incident ${kernelIncident("listener-crowding").number}: many listeners on one port`, () => {
  let h: ListenerCrowdingHandle;
  beforeAll(async () => {
    h = await setup({ port: 53 });
  });
  afterAll(async () => {
    await h?.teardown();
    expect((await listNamespaces()).filter((n) => n.startsWith(LISTENER_CROWDING_PREFIX))).toEqual([]);
  });

  it("counts 16,000 listeners on :53", async () => {
    await h.trigger({ count: 16_000, lifetimeMs: 60_000 });
    const counts = await h.listenersByPort();
    console.log(
      `[listener-crowding] listeners per port: ${JSON.stringify([...counts])} pid ${h.listenerPid}`,
    );
    expect(counts.get(53)).toBe(16_000);
  });

  it("remedy: one wildcard listener", async () => {
    await h.remedy();
    const counts = await h.listenersByPort();
    expect(counts.get(53)).toBe(1);
  });
});
