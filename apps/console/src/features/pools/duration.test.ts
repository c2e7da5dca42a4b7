import { expect, test } from "vitest";
import { formatDuration } from "./duration";

test("formatDuration reads as the two largest units, never negative", () => {
  expect(formatDuration(-5_000)).toBe("0 s");
  expect(formatDuration(57_900)).toBe("57 s");
  expect(formatDuration(60_000)).toBe("1 min");
  expect(formatDuration(243_000)).toBe("4 min 3 s");
  expect(formatDuration(2 * 3600_000 + 5 * 60_000 + 59_000)).toBe("2 h 5 min");
  expect(formatDuration(3 * 86400_000)).toBe("3 d");
  expect(formatDuration(3 * 86400_000 + 4 * 3600_000)).toBe("3 d 4 h");
});
