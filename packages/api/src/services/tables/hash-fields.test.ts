import { TideError } from "@tide/contracts";
import { describe, expect, it } from "vitest";
import { parseHashFields } from "./hash-fields";

describe("hash fields", () => {
  it("parses comma-separated fields into hashing order, refusing unknown or repeated ones", () => {
    expect(parseHashFields("src_port, src_addr")).toEqual(["src_addr", "src_port"]);
    expect(parseHashFields(["dst_port", "src_addr"])).toEqual(["src_addr", "dst_port"]);
    for (const bad of ["src_addr,src_addr", "src_ip", ""]) {
      const e = (() => {
        try {
          parseHashFields(bad);
        } catch (err) {
          return err;
        }
        return null;
      })();
      expect(e, bad).toBeInstanceOf(TideError);
      expect((e as TideError).details?.fields).toHaveProperty("hashFields");
    }
  });
});
