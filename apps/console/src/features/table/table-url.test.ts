import { describe, expect, it } from "vitest";
import { searchFromTableState, tableStateFromSearch } from "./table-url";

describe("table URL state", () => {
  it("round-trips row, filter and explained flow", () => {
    const state = {
      row: 0xbb44,
      proxy: "prx_4k9x2m7q1c8d0fhj",
      column: "primary" as const,
      src: "[2001:db8::7]:45678",
      dst: "192.0.2.10:443",
    };
    const search = searchFromTableState(7, state);
    expect(search).toBe(
      "?version=7&row=0xbb44&proxy=prx_4k9x2m7q1c8d0fhj&column=primary&src=%5B2001%3Adb8%3A%3A7%5D%3A45678&dst=192.0.2.10%3A443",
    );
    expect(tableStateFromSearch(Object.fromEntries(new URLSearchParams(search)))).toEqual(state);
  });

  it("leaves out what is not set, and the default column", () => {
    expect(searchFromTableState(null, { row: null, proxy: null, column: "either", src: "", dst: "" })).toBe(
      "",
    );
    expect(
      searchFromTableState(null, { row: 0, proxy: "prx_a", column: "either", src: "", dst: "192.0.2.1" }),
    ).toBe("?row=0x0000&proxy=prx_a");
  });

  it("ignores values that are not a row, a proxy id or a column", () => {
    expect(
      tableStateFromSearch({ row: "0x10000", proxy: "www-1", column: "sideways", src: ["a", "b"] }),
    ).toEqual({
      row: null,
      proxy: null,
      column: "either",
      src: "",
      dst: "",
    });
  });
});
