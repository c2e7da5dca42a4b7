import { describe, expect, it } from "vitest";
import { formatTargets, parseTargets } from "./pmtu-targets-text";

describe("parseTargets", () => {
  it("reads targets and sizes, by commas or spaces, skipping blank lines", () => {
    expect(parseTargets("10.30.0.2 1472,1200\n\n  edge-gw.example.net  \nfe80::1 1400, 1280 576")).toEqual({
      ok: true,
      targets: [
        { target: "10.30.0.2", sizes: [1472, 1200] },
        { target: "edge-gw.example.net", sizes: [] },
        { target: "fe80::1", sizes: [1400, 1280, 576] },
      ],
    });
  });

  it("names the line, the value and what is accepted for a bad size", () => {
    expect(parseTargets("10.30.0.2 1472\nedge-gw abc")).toEqual({
      ok: false,
      problems: ["Line 2: 'abc' is not a packet size; sizes are whole numbers from 68 to 9000."],
    });
    for (const size of ["20", "9001", "1472.5", "-1", "1e3"]) {
      const r = parseTargets(`10.30.0.2 ${size}`);
      expect(r.ok ? [] : r.problems, size).toEqual([
        `Line 1: '${size}' is not a packet size; sizes are whole numbers from 68 to 9000.`,
      ]);
    }
  });

  it("refuses a bad target, a repeated target and too many sizes, each in a sentence", () => {
    const r = parseTargets("-oops\na 100,200,300,400,500,600,700,800,900\na");
    expect(r.ok ? [] : r.problems).toEqual([
      "Line 1: '-oops' is not a target; it must be an IP address or a host name (letters, digits, '.', ':', '_' and '-', starting with a letter or digit).",
      "Line 2: 9 sizes; at most 8 per target.",
      "Line 3: 'a' is already on line 2; list each target once.",
    ]);
  });

  it("refuses more than 32 targets", () => {
    const text = Array.from({ length: 33 }, (_, i) => `h${i}`).join("\n");
    expect(parseTargets(text)).toEqual({ ok: false, problems: ["33 targets; at most 32 per host."] });
  });

  it("reads back what formatTargets writes", () => {
    const targets = [
      { target: "10.30.0.2", sizes: [1200, 1472] },
      { target: "edge-gw.example.net", sizes: [] },
    ];
    expect(parseTargets(formatTargets(targets))).toEqual({ ok: true, targets });
  });
});
