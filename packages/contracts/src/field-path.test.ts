import { describe, expect, it } from "vitest";
import { fieldInWords, fieldPath, parseFieldPath } from "./field-path";

describe("field paths", () => {
  it("names a field as a key and back", () => {
    expect(fieldPath(["binds", 1, "address"])).toBe("binds[1].address");
    expect(parseFieldPath("binds[1].address")).toEqual(["binds", 1, "address"]);
    expect(parseFieldPath("targets[0].sizes[2]")).toEqual(["targets", 0, "sizes", 2]);
    expect(parseFieldPath(fieldPath([3]))).toEqual([3]);
    expect(parseFieldPath("")).toEqual([]);
  });

  it("says a field in words, entries counted from 1", () => {
    expect(fieldInWords(["targets", 0, "sizes", 1])).toBe("targets entry 1, sizes entry 2");
    expect(fieldInWords(parseFieldPath("binds[1].address"))).toBe("binds entry 2, address");
    expect(fieldInWords([3])).toBe("entry 4");
    expect(fieldInWords([])).toBe("the input");
  });
});
