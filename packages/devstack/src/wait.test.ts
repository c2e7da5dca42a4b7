import { describe, expect, it } from "vitest";
import { waitFor } from "./wait";

describe("waitFor", () => {
  it("returns the first value that is neither undefined nor false", async () => {
    const answers: (number | undefined | false)[] = [undefined, false, 0];
    let calls = 0;
    const value = await waitFor("a number", () => answers[calls++], { timeoutMs: 5_000, intervalMs: 1 });
    expect(value).toBe(0);
    expect(calls).toBe(3);
  });

  it("fails with what it waited for and the detail once the time is up", async () => {
    await expect(
      waitFor("the socket", () => false, { timeoutMs: 20, intervalMs: 5, detail: () => "log: nothing" }),
    ).rejects.toThrow("timed out after 20 ms waiting for the socket; log: nothing");
  });

  it("ends the wait on a probe's error unless told to retry, then names the last error", async () => {
    const failing = () => {
      throw new Error("ECONNRESET");
    };
    await expect(waitFor("the console", failing, { timeoutMs: 1_000 })).rejects.toThrow("ECONNRESET");
    let calls = 0;
    const flaky = async () => {
      calls++;
      if (calls < 3) throw new Error("ECONNRESET");
      return "up";
    };
    expect(await waitFor("the console", flaky, { timeoutMs: 5_000, intervalMs: 1, retryErrors: true })).toBe(
      "up",
    );
    await expect(
      waitFor("the console", failing, { timeoutMs: 20, intervalMs: 5, retryErrors: true }),
    ).rejects.toThrow("timed out after 20 ms waiting for the console (last error: ECONNRESET)");
  });
});
