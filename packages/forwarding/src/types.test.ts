import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MAX_BACKENDS, MAX_BINDS, TABLE_ROWS } from "./types";

const GLBD_HEADER = new URL("../../../dataplane/common/tide_glbd.h", import.meta.url);

describe("table limits", () => {
  it("are the ones the C packet core declares (dataplane/common/tide_glbd.h)", () => {
    const text = readFileSync(GLBD_HEADER, "utf8");
    const define = (name: string) => Number(new RegExp(`^#define ${name} (\\d+)u?\\b`, "m").exec(text)?.[1]);
    expect({
      rows: define("TIDE_TABLE_ROWS"),
      backends: define("TIDE_MAX_BACKENDS"),
      binds: define("TIDE_MAX_BINDS"),
    }).toEqual({ rows: TABLE_ROWS, backends: MAX_BACKENDS, binds: MAX_BINDS });
  });
});
