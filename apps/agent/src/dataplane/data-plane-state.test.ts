import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { redirectState } from "./data-plane-state";

const dir = mkdtempSync(join(tmpdir(), "tide-agent-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const vip = {
  address: "10.201.0.10",
  port: 80,
  proto: "tcp",
  counters: {
    forwarded_to_alternate: 2,
    accepted_second_chance: 3,
    accepted_alternate_hash: 1,
    accepted_last_resort: 0,
    accepted_established: 40,
    accepted_syn: 5,
  },
};

const flowRecord = {
  client_address: "10.201.9.7",
  client_port: 40000,
  address: "10.201.0.10",
  port: 80,
  proto: "tcp",
  first_seen_ms_ago: 5000,
  second_chance: { packets: 12, last_seen_ms_ago: 250 },
  alternate_hash: { packets: 4, last_seen_ms_ago: 1000 },
  last_resort: null,
};

/** A tide-redirect socket; `vips` false answers as one before the VIP map (no vips, no why counters). */
function fakeRedirect(path: string, vips = true): Promise<Server> {
  const counters = Object.fromEntries(
    [
      "total",
      "accepted_syn",
      "accepted_established",
      "accepted_syn_cookie",
      "accepted_last_resort",
      "accepted_udp",
      "accepted_icmp",
      "accepted_pmtu",
      "forwarded_to_self",
      "forwarded_to_alternate",
      "not_gue",
      "dropped_malformed",
      "dropped_truncated",
      "forward_failed",
      "decap_failed",
    ].map((k) => [k, 1]),
  );
  const status = {
    version: "0.1.0",
    pid: 10,
    started_at: "2026-01-01T00:00:00Z",
    uptime_s: 5,
    iface: "eth0",
    ifindex: 2,
    netns: null,
    attach: "tc-ingress",
    prog_id: 7,
    port: 19523,
    local_addresses: ["10.0.0.1"],
  };
  const server = createServer((sock) => {
    let buf = "";
    sock.on("data", (d) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const req = JSON.parse(buf.slice(0, nl)) as { id: number; cmd: string };
        buf = buf.slice(nl + 1);
        if (req.cmd === "flows") {
          // An older tide-redirect does not know the command; a newer one lists one flow of two matched.
          const reply = vips
            ? { id: req.id, ok: true, result: { flows: [flowRecord], matched: 2, capacity: 8192 } }
            : {
                id: req.id,
                ok: false,
                error: { code: "unknown_command", message: "unknown command: flows" },
              };
          sock.write(JSON.stringify(reply) + "\n");
          continue;
        }
        const result =
          req.cmd === "status"
            ? status
            : vips
              ? {
                  counters: { ...counters, accepted_second_chance: 3, accepted_alternate_hash: 1 },
                  vips: [vip],
                }
              : { counters };
        sock.write(JSON.stringify({ id: req.id, ok: true, result }) + "\n");
      }
    });
  });
  return new Promise((resolve) => server.listen(path, () => resolve(server)));
}

describe("redirectState", () => {
  it("reports an absent socket as unreachable without throwing", async () => {
    const s = await redirectState(join(dir, "missing.sock"));
    expect(s).toMatchObject({ component: "redirect", reachable: false, redirectCounters: null });
    expect(s.error).toMatch(/ENOENT/);
  });

  it("reads status and stats from a live socket, with the why counters and VIPs", async () => {
    const path = join(dir, "redirect.sock");
    const server = await fakeRedirect(path);
    try {
      const s = await redirectState(path, {}, () => new Date("2026-11-28T06:00:00.000Z"));
      expect(s).toMatchObject({ reachable: true, error: null, version: "0.1.0" });
      expect(s.redirectCounters?.total).toBe(1);
      expect(s.redirectCounters?.accepted_second_chance).toBe(3);
      expect(s.redirectVips).toEqual([vip]);
      expect(s.countersReadAt).toBe("2026-11-28T06:00:00.000Z");
      // Flows with their ages turned into times from the reading, and the matched count (capped list).
      expect(s.redirectFlows).toEqual([
        {
          clientAddress: "10.201.9.7",
          clientPort: 40000,
          address: "10.201.0.10",
          port: 80,
          proto: "tcp",
          firstSeenAt: "2026-11-28T05:59:55.000Z",
          secondChance: { packets: 12, lastSeenAt: "2026-11-28T05:59:59.750Z" },
          alternateHash: { packets: 4, lastSeenAt: "2026-11-28T05:59:59.000Z" },
          lastResort: null,
        },
      ]);
      expect(s.redirectFlowsMatched).toBe(2);
    } finally {
      server.close();
    }
  });

  it("takes an older tide-redirect's reply: counters, no VIPs", async () => {
    const path = join(dir, "redirect-old.sock");
    const server = await fakeRedirect(path, false);
    try {
      const s = await redirectState(path);
      expect(s).toMatchObject({ reachable: true, error: null, redirectVips: null, redirectFlows: null });
      expect(s.redirectCounters?.total).toBe(1);
      expect(s.redirectCounters).not.toHaveProperty("accepted_second_chance");
    } finally {
      server.close();
    }
  });
});
