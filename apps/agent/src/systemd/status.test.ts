import { describe, expect, it } from "vitest";
import type { AgentProgress } from "../agent";
import { agentStatus, Readiness, STATUS_EVERY_MS } from "./status";

const URL_ = "https://tide.example.net";

function progress(c: Partial<NonNullable<AgentProgress["console"]>> | null, samples = 1): AgentProgress {
  return {
    hostname: "lb-01",
    samples,
    console:
      c === null ? null : { url: URL_, delivered: 0, failing: null, buffered: 1, lastError: null, ...c },
  };
}

describe("agentStatus", () => {
  it("is ready once a batch is stored, or once the console failed and the agent is buffering", () => {
    const table: [AgentProgress, boolean, string][] = [
      [progress({}), false, `connecting to ${URL_} as lb-01`],
      [progress({ delivered: 1, buffered: 0 }), true, `reporting to ${URL_} as lb-01`],
      [progress({ delivered: 3, buffered: 40 }), true, `reporting to ${URL_} as lb-01, 40 samples to send`],
      [
        progress({ failing: "unreachable", buffered: 12, lastError: "connect ECONNREFUSED 10.0.0.1:443" }),
        true,
        `console ${URL_} unreachable, buffering 12 samples: connect ECONNREFUSED 10.0.0.1:443`,
      ],
      [
        progress({ failing: "token", buffered: 1, lastError: "HTTP 401" }),
        true,
        `console ${URL_} rejected the host token (check hostTokenFile), buffering 1 sample`,
      ],
      [
        progress({
          failing: "tls",
          buffered: 2,
          lastError: `console ${URL_}: its TLS certificate is not trusted (…): set caFile …`,
        }),
        true,
        `console ${URL_}: its TLS certificate is not trusted (…): set caFile …; buffering 2 samples`,
      ],
      [progress(null, 0), false, "sampling as lb-01, local-only (no consoleUrl): /metrics and doctor only"],
      [progress(null, 1), true, "sampling as lb-01, local-only (no consoleUrl): /metrics and doctor only"],
    ];
    for (const [p, ready, status] of table) expect(agentStatus(p), status).toMatchObject({ ready, status });
  });
});

/** A notifier that records what it was asked to send. */
function recorder() {
  const sent: string[] = [];
  return {
    sent,
    notify: {
      ready: (s: string) => {
        sent.push(`READY ${s}`);
        return Promise.resolve();
      },
      status: (s: string) => {
        sent.push(`STATUS ${s}`);
        return Promise.resolve();
      },
    },
  };
}

describe("Readiness", () => {
  it("sends READY=1 once, then a new phase at once and a moving count at most every 10 s", () => {
    const { sent, notify } = recorder();
    let now = 0;
    const r = new Readiness(notify, () => now);
    r.update(progress({}));
    expect(sent).toEqual([]);
    r.update(progress({ delivered: 1, buffered: 0 }));
    r.update(progress({ delivered: 2, buffered: 0 }));
    expect(sent).toEqual([`READY reporting to ${URL_} as lb-01`]);
    now = 1_000;
    r.update(progress({ delivered: 2, failing: "unreachable", buffered: 1 }));
    now = 2_000;
    r.update(progress({ delivered: 2, failing: "unreachable", buffered: 2 }));
    now = 1_000 + STATUS_EVERY_MS;
    r.update(progress({ delivered: 2, failing: "unreachable", buffered: 11 }));
    now += 1_000;
    r.update(progress({ delivered: 3, buffered: 0 }));
    expect(sent.slice(1)).toEqual([
      `STATUS console ${URL_} unreachable, buffering 1 sample`,
      `STATUS console ${URL_} unreachable, buffering 11 samples`,
      `STATUS reporting to ${URL_} as lb-01`,
    ]);
    expect(r.lastStatus).toBe(`reporting to ${URL_} as lb-01`);
  });

  it("is ready without a console once the console is unreachable, and again after a reset", () => {
    const { sent, notify } = recorder();
    const r = new Readiness(notify, () => 0);
    r.update(progress({ failing: "unreachable", buffered: 1 }));
    expect(sent).toEqual([`READY console ${URL_} unreachable, buffering 1 sample`]);
    r.reset();
    expect(r.isReady).toBe(false);
    r.update(progress(null, 0));
    r.update(progress(null, 1));
    expect(sent[1]).toBe("READY sampling as lb-01, local-only (no consoleUrl): /metrics and doctor only");
  });
});
