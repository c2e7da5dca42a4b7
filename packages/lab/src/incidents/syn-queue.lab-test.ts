/**
 * Incident syn-queue (root): with SYN-ACKs dropped in the client, the server's SYN queue fills; with
 * syncookies 0 TcpExt TCPReqQFullDrop rises (no cookies), and after remedy() (cookies on)
 * TCPReqQFullDrop stops rising while TCPReqQFullDoCookies and SyncookiesSent rise.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kernelIncident } from "@tide/contracts";
import { setup, type SynQueueHandle, SYN_QUEUE_PREFIX } from "./syn-queue";
import { readNstat } from "./namespace";
import { listNamespaces } from "../host-command";

const delta = (a: Record<string, number>, b: Record<string, number>, k: string) => (b[k] ?? 0) - (a[k] ?? 0);

describe(`incident ${kernelIncident("syn-queue").number}: SYN queue full`, () => {
  let h: SynQueueHandle;
  beforeAll(async () => {
    h = await setup({ backlog: 16, syncookies: 0 });
  });
  afterAll(async () => {
    await h?.teardown();
    expect((await listNamespaces()).filter((n) => n.startsWith(SYN_QUEUE_PREFIX))).toEqual([]);
  });

  it("cookies off: a full SYN queue drops SYNs (TCPReqQFullDrop)", async () => {
    const before = await readNstat(h.namespaces.server.name);
    const burst = await h.trigger({ count: 200, durationMs: 1_500 });
    const after = await readNstat(h.namespaces.server.name);
    const drop = delta(before, after, "TcpExtTCPReqQFullDrop");
    const cookies = delta(before, after, "TcpExtTCPReqQFullDoCookies");
    console.log(
      `[syn-queue] cookies 0: ${JSON.stringify(burst)} TCPReqQFullDrop +${drop} DoCookies +${cookies}`,
    );
    expect(drop).toBeGreaterThan(50);
    expect(cookies).toBe(0);
  });

  it("remedy (cookies on): no more drops, cookies instead", async () => {
    await h.remedy({ cookies: true });
    const before = await readNstat(h.namespaces.server.name);
    const burst = await h.trigger({ count: 200, durationMs: 1_500 });
    const after = await readNstat(h.namespaces.server.name);
    const drop = delta(before, after, "TcpExtTCPReqQFullDrop");
    const cookies = delta(before, after, "TcpExtTCPReqQFullDoCookies");
    const sent = delta(before, after, "TcpExtSyncookiesSent");
    console.log(
      `[syn-queue] cookies 1: ${JSON.stringify(burst)} TCPReqQFullDrop +${drop} DoCookies +${cookies} SyncookiesSent +${sent}`,
    );
    expect(drop).toBe(0);
    expect(cookies).toBeGreaterThan(50);
    expect(sent).toBeGreaterThan(50);
  });

  it("remedy (bigger backlog): the SYN queue no longer fills", async () => {
    await h.remedy({ cookies: true, backlog: 1024 });
    const before = await readNstat(h.namespaces.server.name);
    await h.trigger({ count: 200, durationMs: 1_500 });
    const after = await readNstat(h.namespaces.server.name);
    expect(delta(before, after, "TcpExtTCPReqQFullDoCookies")).toBe(0);
    expect(delta(before, after, "TcpExtTCPReqQFullDrop")).toBe(0);
  });
});
