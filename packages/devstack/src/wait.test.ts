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

  it("fails at once, with the exit code or signal, when the process it waits on has exited", async () => {
    const child: { exitCode: number | null; signalCode: NodeJS.Signals | null } = {
      exitCode: null,
      signalCode: null,
    };
    let calls = 0;
    const start = Date.now();
    const waiting = waitFor(
      "the socket",
      () => {
        if (++calls === 2) child.exitCode = 1;
        return false;
      },
      { timeoutMs: 60_000, intervalMs: 1, whileRunning: child, detail: () => "log: bind failed" },
    );
    await expect(waiting).rejects.toThrow(
      "gave up waiting for the socket: its process exited (code 1); log: bind failed",
    );
    expect(calls).toBe(2);
    expect(Date.now() - start).toBeLessThan(5_000);
    child.exitCode = null;
    child.signalCode = "SIGKILL";
    await expect(
      waitFor("the socket", () => true, { timeoutMs: 1_000, whileRunning: child }),
    ).rejects.toThrow("gave up waiting for the socket: its process exited (signal SIGKILL)");
    child.signalCode = null;
    expect(await waitFor("the socket", () => "up", { timeoutMs: 1_000, whileRunning: child })).toBe("up");
  });
});
