import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { GUE_HEADER_BYTES, GUE_INNER_PROTO, GUE_PORT, gueIpOverhead } from "./gue-wire";

const HEADER = new URL("../../../dataplane/common/tide_gue_wire.h", import.meta.url);

/** `#define NAME 123u` lines of the C header, as numbers. */
function cDefines(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of text.matchAll(/^#define (TIDE_\w+) (\d+)u?$/gm)) out.set(m[1]!, Number(m[2]));
  return out;
}

describe("GUE wire constants", () => {
  const c = cDefines(readFileSync(HEADER, "utf8"));

  it("are the ones dataplane/common/tide_gue_wire.h declares for the C packet paths", () => {
    expect(Object.fromEntries(c)).toEqual({
      TIDE_GUE_PORT: GUE_PORT,
      TIDE_ETH_HLEN: GUE_HEADER_BYTES.ethernet,
      TIDE_OUTER_IP_HLEN: GUE_HEADER_BYTES.outerIpv4,
      TIDE_UDP_HLEN: GUE_HEADER_BYTES.udp,
      TIDE_GUE_BASE_HLEN: GUE_HEADER_BYTES.gueBase,
      TIDE_GLB_PRIV_HLEN: GUE_HEADER_BYTES.glbPrivate,
      TIDE_GLB_HOP_LEN: GUE_HEADER_BYTES.hop,
      TIDE_GUE_PROTO_IPV4: GUE_INNER_PROTO.ipv4,
      TIDE_GUE_PROTO_IPV6: GUE_INNER_PROTO.ipv6,
    });
  });

  it("add 36 bytes plus 4 per hop to an inner IP packet", () => {
    expect(gueIpOverhead(0)).toBe(36);
    expect(gueIpOverhead(1)).toBe(40);
    expect(gueIpOverhead(2)).toBe(44);
  });
});
