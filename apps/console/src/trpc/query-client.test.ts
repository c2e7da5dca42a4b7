import { describe, expect, it } from "vitest";
import { shouldRetry } from "./query-client";

const failed = (httpStatus: number) => ({ message: "x", data: { httpStatus } });

describe("shouldRetry", () => {
  it("never retries an answer the server gave on purpose (4xx): not found shows at once", () => {
    for (const status of [400, 401, 403, 404, 409, 413, 429])
      expect(shouldRetry(0, failed(status))).toBe(false);
  });

  it("retries a server error or a network failure once", () => {
    expect(shouldRetry(0, failed(503))).toBe(true);
    expect(shouldRetry(1, failed(503))).toBe(false);
    expect(shouldRetry(0, new TypeError("fetch failed"))).toBe(true);
    expect(shouldRetry(1, new TypeError("fetch failed"))).toBe(false);
  });
});
