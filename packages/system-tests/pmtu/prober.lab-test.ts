/**
 * The agent's PMTU check against packages/lab's incident 3 topology (root): client -1500- ra -1200-
 * rb -9000- server. With ra dropping its own ICMP frag-needed the agent must call it a blackhole;
 * after remedy() it must report pmtu 1200 and no blackhole. The checks run inside the client
 * namespace (`ip netns exec`), exactly as the agent runs them in its own.
 */
import { afterAll, describe, expect, it } from "vitest";
import { checkTarget, execWithTimeout, type Exec } from "@tide/agent";
import { pmtuBlackhole } from "@tide/lab/incidents";

const inNamespace =
  (ns: string): Exec =>
  (file, args, timeoutMs) =>
    execWithTimeout("ip", ["netns", "exec", ns, file, ...args], timeoutMs);

describe("agent PMTU check on the lab's blackhole", () => {
  let h: pmtuBlackhole.PmtuHandle | undefined;
  afterAll(async () => {
    await h?.teardown();
  });

  it("detects the blackhole, then pmtu 1200 after the remedy", async () => {
    h = await pmtuBlackhole.setup();
    const exec = inNamespace(h.namespaces.client.name);
    const target = { target: h.namespaces.server.address, sizes: [1400] };
    await h.trigger();
    await h.flushPmtuCache();
    const started = Date.now();
    const bad = await checkTarget(target, exec);
    console.log(`[agent pmtu] blackhole (${Date.now() - started} ms): ${JSON.stringify(bad)}`);
    expect(bad).toMatchObject({ reached: true, blackhole: true, method: "ping", pmtu: 1500 });
    expect(bad.evidence).toMatch(/no reply and no ICMP frag-needed/);

    await h.remedy();
    await h.flushPmtuCache();
    const good = await checkTarget(target, exec);
    console.log(`[agent pmtu] remedied: ${JSON.stringify(good)}`);
    expect(good).toMatchObject({ reached: true, blackhole: false, pmtu: 1200 });
    expect(good.evidence).toMatch(/Frag needed and DF set \(mtu = 1200\)|pmtu 1200/);
  });
});
