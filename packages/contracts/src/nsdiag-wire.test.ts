import { describe, expect, it } from "vitest";
import { ESTABLISHED_MAX_ENDPOINTS } from "./observations";
import { NsdiagLine, NsdiagNamespace, NsdiagReply, NsdiagRequest } from "./nsdiag-wire";
import { NSDIAG_GONE as GONE, NSDIAG_OK as OK } from "./testing";

describe("tide-nsdiag wire", () => {
  it("accepts the request, hello, reply and error reply as tide_nsdiag.c documents them", () => {
    const request = {
      id: 7,
      sysctls: true,
      ns: [
        { inode: 4026531840, path: null },
        { inode: 4026532500, path: "/run/netns/web" },
      ],
    };
    expect(NsdiagRequest.parse(request)).toEqual(request);
    const reply = { id: 7, ns: [OK, GONE] };
    expect(NsdiagReply.parse(reply)).toEqual(reply);
    expect(NsdiagLine.parse(reply)).toEqual(reply);
    const hello = { type: "hello", version: "0.1.0", netns: 4026531840 };
    expect(NsdiagLine.parse(hello)).toEqual(hello);
    expect(NsdiagLine.parse({ id: null, error: "request line too long" })).toEqual({
      id: null,
      error: "request line too long",
    });
  });

  it("accepts an entry of an older tide-nsdiag without established counts or sysctls", () => {
    const { established: _e, established_total: _t, sysctls: _s, ...old } = OK;
    expect(NsdiagNamespace.safeParse(old).success).toBe(true);
  });

  it("refuses malformed entries and lines", () => {
    const bad: unknown[] = [
      { ...OK, listeners: [["", 1, 0, 0]] },
      { ...OK, listeners: [["127.0.0.1", 70000, 0, 0]] },
      { ...OK, established: [["x".repeat(46), 1, 1]] },
      {
        ...OK,
        established: Array.from({ length: ESTABLISHED_MAX_ENDPOINTS + 1 }, (_, i) => ["10.0.0.1", i, 1]),
      },
      { ...OK, sysctls: { "net/core/somaxconn": 3 } },
      { ...OK, inode: 0 },
      { ...GONE, error: undefined },
      { ...GONE, state: "weird" },
    ];
    for (const entry of bad)
      expect(NsdiagNamespace.safeParse(entry).success, JSON.stringify(entry)).toBe(false);
    expect(NsdiagReply.safeParse({ id: 7, ns: [OK, { ...OK, ports: "x" }] }).success).toBe(false);
    // the line-level schema leaves entries to be checked one by one, but not the envelope
    expect(NsdiagLine.safeParse({ id: 7, ns: [OK, { ...OK, ports: "x" }] }).success).toBe(true);
    for (const line of [{ id: "7", ns: [] }, { id: 7 }, { type: "hello", version: "0.1.0" }, "x"])
      expect(NsdiagLine.safeParse(line).success, JSON.stringify(line)).toBe(false);
  });
});
