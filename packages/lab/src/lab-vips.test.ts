import { decodeGlbd } from "@tide/forwarding";
import { describe, expect, it } from "vitest";
import { isLabError } from "./errors";
import { buildLabTable } from "./lab-table";
import { checkNewVip, parseVip, vipAddPlan, vipRemovePlan } from "./lab-vips";
import { buildGlbTopology } from "./topology";

const t = buildGlbTopology();

/** The message of the LabError `fn` throws (fails the test when it throws none or another kind). */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (isLabError(e, "bad_argument")) return e.message;
    throw e;
  }
  throw new Error("no error");
}

describe("parseVip", () => {
  it.each([
    ["10.200.0.20", "10.200.0.20/32", 32],
    ["10.200.0.20/32", "10.200.0.20/32", 32],
    [" 10.200.1.0/28 ", "10.200.1.0/28", 28],
    ["192.0.2.0/24", "192.0.2.0/24", 24],
    ["172.16.0.0/16", "172.16.0.0/16", 16],
  ])("takes %j as %s", (text, cidr, bits) => {
    expect(parseVip(text)).toEqual({ cidr, address: cidr.split("/")[0], prefixBits: bits });
  });

  it.each([
    ["", /bad VIP ""/],
    ["10.200.0", /bad VIP "10.200.0"/],
    ["10.200.0.256", /bad VIP/],
    ["010.200.0.1", /bad VIP/],
    ["10.200.0.20/33", /invalid prefix length/],
    ["10.200.0.20/", /invalid prefix length/],
    ["fd00::10", /IPv4 only/],
    ["10.200.0.0/15", /shorter than \/16/],
    ["10.200.1.5/28", /host bits set \(did you mean 10\.200\.1\.0\/28\?\)/],
    ["0.0.0.0/32", /not a unicast address/],
    ["127.0.0.2", /not a unicast address/],
    ["169.254.1.1", /not a unicast address/],
    ["224.0.0.1", /not a unicast address/],
    ["255.255.255.255", /not a unicast address/],
  ])("refuses %j", (text, message) => {
    expect(refusal(() => parseVip(text))).toMatch(message);
  });
});

describe("checkNewVip", () => {
  const added = [{ cidr: "10.200.1.0/28", pool: "web" }];
  it("is new, or exists when the same prefix was added (adding again is a no-op)", () => {
    expect(checkNewVip(t, added, parseVip("10.200.0.20"))).toBe("new");
    expect(checkNewVip(t, added, parseVip("10.200.1.16/28"))).toBe("new");
    expect(checkNewVip(t, added, parseVip("10.200.1.0/28"))).toBe("exists");
  });

  it("refuses the lab's links, its own VIP and overlaps with an added VIP", () => {
    expect(refusal(() => checkNewVip(t, added, parseVip("10.100.12.2")))).toMatch(/lab's own links/);
    expect(refusal(() => checkNewVip(t, added, parseVip("10.100.0.0/16")))).toMatch(/lab's own links/);
    expect(refusal(() => checkNewVip(t, added, parseVip("10.200.0.10")))).toMatch(/is the lab's own VIP/);
    expect(refusal(() => checkNewVip(t, added, parseVip("10.200.0.0/24")))).toMatch(
      /contains the lab's own VIP/,
    );
    expect(refusal(() => checkNewVip(t, added, parseVip("10.200.1.4")))).toMatch(
      /overlaps 10\.200\.1\.0\/28/,
    );
    expect(refusal(() => checkNewVip(t, added, parseVip("10.200.0.0/16")))).toMatch(/lab's own VIP/);
  });
});

describe("vip plans", () => {
  it("routes the VIP towards the directors in the ECMP route and puts it on every proxy's lo", () => {
    const plan = vipAddPlan(t, parseVip("10.200.1.0/28"), ["dir1", "dir2"]).map((s) => s.argv.join(" "));
    expect(plan).toEqual([
      "ip -n tide-glb-router route replace 10.200.1.0/28 nexthop via 10.100.2.2 dev dir1 nexthop via 10.100.3.2 dev dir2",
      "ip -n tide-glb-prx1 addr replace 10.200.1.0/28 dev lo",
      "ip -n tide-glb-prx2 addr replace 10.200.1.0/28 dev lo",
      "ip -n tide-glb-prx3 addr replace 10.200.1.0/28 dev lo",
    ]);
    expect(vipAddPlan(t, parseVip("10.200.0.20"), ["dir2"])[0]!.argv.join(" ")).toBe(
      "ip -n tide-glb-router route replace 10.200.0.20/32 via 10.100.3.2 dev dir2",
    );
  });

  it("removes what it added, tolerating what is already gone", () => {
    const plan = vipRemovePlan(t, parseVip("10.200.0.20"));
    expect(plan.map((s) => s.argv.join(" "))).toEqual([
      "ip -n tide-glb-router route del 10.200.0.20/32",
      "ip -n tide-glb-prx1 addr del 10.200.0.20/32 dev lo",
      "ip -n tide-glb-prx2 addr del 10.200.0.20/32 dev lo",
      "ip -n tide-glb-prx3 addr del 10.200.0.20/32 dev lo",
    ]);
    expect(plan.every((s) => s.allowFailure)).toBe(true);
  });

  it("binds an added VIP on the lab's ports in the lab's table", () => {
    const table = buildLabTable(t, {}, {}, [parseVip("10.200.1.0/28")]);
    const binds = decodeGlbd(table.bytes)[0]!.binds.map(
      (b) => `${b.proto} ${b.address}/${b.prefixBits} ${b.portStart}`,
    );
    expect(binds).toEqual([
      "tcp 10.200.0.10/32 80",
      "tcp 10.200.0.10/32 9000",
      "udp 10.200.0.10/32 9000",
      "tcp 10.200.1.0/28 80",
      "tcp 10.200.1.0/28 9000",
      "udp 10.200.1.0/28 9000",
    ]);
    expect(table.hash).not.toBe(buildLabTable(t).hash);
  });
});
