import { expect, test } from "vitest";
import { bindInputsOf, isBindField, newBindRow, parsePorts, rowErrors, rowsFromBinds } from "./bind-rows";

test("parsePorts reads a port or a range and refuses anything else", () => {
  expect(parsePorts("443")).toEqual({ portStart: 443, portEnd: 443 });
  expect(parsePorts(" 8000 - 8099 ")).toEqual({ portStart: 8000, portEnd: 8099 });
  expect(parsePorts("")).toBeNull();
  expect(parsePorts("http")).toBeNull();
  expect(parsePorts("80,443")).toBeNull();
});

test("bindInputsOf names the rows whose ports are not numbers", () => {
  const rows = [
    newBindRow({ address: " 203.0.113.10 ", ports: "443" }),
    newBindRow({ address: "203.0.113.11", proto: "udp", ports: "x" }),
  ];
  expect(bindInputsOf(rows)).toEqual({
    ok: false,
    fields: { "binds[1].ports": "Give a port (443) or a range (8000-8099)." },
  });
  rows[1]!.ports = "53";
  expect(bindInputsOf(rows)).toEqual({
    ok: true,
    binds: [
      { address: "203.0.113.10", proto: "tcp", portStart: 443, portEnd: 443 },
      { address: "203.0.113.11", proto: "udp", portStart: 53, portEnd: 53 },
    ],
  });
});

test("rowErrors puts portStart/portEnd on the ports input and an overlap on the row", () => {
  const fields = { "binds[1].portEnd": "bad range", "binds[1]": "overlaps", "binds[0].address": "no" };
  expect(rowErrors(fields, 1)).toEqual({
    address: undefined,
    proto: undefined,
    ports: "bad range",
    row: "overlaps",
  });
  expect(rowErrors(fields, 0).address).toBe("no");
  expect(isBindField("binds[12].address")).toBe(true);
  expect(isBindField("binds")).toBe(true);
  expect(isBindField("name")).toBe(false);
});

test("rowsFromBinds shows networks with their prefix and single addresses without", () => {
  const rows = rowsFromBinds([
    { id: "b1", address: "203.0.113.64/26", prefixBits: 26, proto: "tcp", portStart: 8000, portEnd: 8099 },
    { id: "b2", address: "2001:db8::10", prefixBits: 128, proto: "udp", portStart: 53, portEnd: 53 },
  ]);
  expect(rows.map(({ address, proto, ports }) => ({ address, proto, ports }))).toEqual([
    { address: "203.0.113.64/26", proto: "tcp", ports: "8000-8099" },
    { address: "2001:db8::10", proto: "udp", ports: "53" },
  ]);
});
