import { describe, expect, it } from "vitest";
import { sample } from "@tide/diagnostics/fixtures";
import { ConsoleHttpError, ConsoleLink, versionSkewRefusal } from "./console-link";
import { testHello } from "./testing";

const REASON =
  "tide-agent 0.1.0 is 2 minor versions older than the console (0.3.0): an agent may be at most 1 minor " +
  "version older or newer than its console. Upgrade the agent.";

let fetched = 0;

/** A console that answers every hello with `status` and `body`. */
function refusingConsole(status: number, body: unknown) {
  fetched = 0;
  return (async () => {
    fetched++;
    return new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json" },
    });
  }) as typeof globalThis.fetch;
}

const skewBody = {
  message: REASON,
  code: "CONFLICT",
  data: {
    tideCode: "conflict",
    details: { reason: "version_skew", consoleVersion: "0.3.0", agentVersion: "0.1.0" },
  },
};

function linkTo(fetch: typeof globalThis.fetch, logs: string[]) {
  return new ConsoleLink({
    consoleUrl: "http://console.test",
    token: "tide_host_secret",
    bufferCapacity: 100,
    spoolDir: null,
    hello: () => testHello("lb-fra-03"),
    log: (line) => logs.push(line),
    onDesired: () => Promise.resolve(),
    fetch,
  });
}

describe("versionSkewRefusal", () => {
  it("reads the console's reason from a 409 version_skew answer, and nothing else", () => {
    const err = (status: number, body: unknown) =>
      new ConsoleHttpError(status, "POST /api/v1/agent/hello", null, JSON.stringify(body));
    expect(versionSkewRefusal(err(409, skewBody))).toBe(REASON);
    expect(versionSkewRefusal(err(409, { message: "pool changed", data: { details: {} } }))).toBeNull();
    expect(versionSkewRefusal(err(400, skewBody))).toBeNull();
    expect(versionSkewRefusal(new ConsoleHttpError(409, "x", null, "<html>"))).toBeNull();
    expect(versionSkewRefusal(new Error("x"))).toBeNull();
  });
});

describe("a console that refuses this agent's version", () => {
  it("is said plainly (not 'unreachable'), once a minute, and the samples stay buffered", async () => {
    const logs: string[] = [];
    const link = linkTo(refusingConsole(409, skewBody), logs);
    await link.offer(sample(0), []);
    expect(link.failing).toBe("version");
    expect(logs).toHaveLength(1);
    expect(logs[0]).toContain(`console http://console.test refuses this agent's version: ${REASON}`);
    expect(logs[0]).not.toContain("unreachable");
    await new Promise((r) => setTimeout(r, 1_300)); // past the first backoff step (1 s + up to 20 %)
    await link.offer(sample(1), []);
    expect(fetched).toBeGreaterThanOrEqual(2); // it did ask again
    expect(logs).toHaveLength(1); // and the same refusal is not repeated within the minute
    expect(link.buffer.size).toBe(2);
    await link.close();
  });

  it("another 409 on hello is still an outage to retry", async () => {
    const logs: string[] = [];
    const link = linkTo(refusingConsole(409, { message: "busy elsewhere", data: { details: {} } }), logs);
    await link.offer(sample(0), []);
    expect(link.failing).toBe("unreachable");
    expect(logs[0]).toMatch(/console unreachable/);
    await link.close();
  });
});
