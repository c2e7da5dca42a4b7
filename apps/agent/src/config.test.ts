import { describe, expect, it } from "vitest";
import { parseArgs } from "./cli/cli";
import { configFromEnv, resolveConfig } from "./config";

describe("resolveConfig", () => {
  it("applies defaults", () => {
    const c = resolveConfig([{ hostname: "lb-1" }]);
    expect(c).toMatchObject({
      consoleUrl: null,
      sampleIntervalMs: 1000,
      metricsListen: "127.0.0.1:9464",
      bufferMinutes: 10,
      roles: ["host"],
    });
  });

  it("lets the environment override the file", () => {
    const env = configFromEnv({ TIDE_ROLES: "director,proxy", TIDE_SAMPLE_INTERVAL_MS: 500 });
    const c = resolveConfig([{ hostname: "lb-1", sampleIntervalMs: 2000 }, env]);
    expect(c.roles).toEqual(["director", "proxy"]);
    expect(c.sampleIntervalMs).toBe(500);
  });

  it("takes the namespaces to sample from the file or TIDE_NAMESPACES, and refuses bad names", () => {
    expect(resolveConfig([{ hostname: "lb-1" }]).namespaces).toBeNull();
    const env = configFromEnv({ TIDE_NAMESPACES: "lab-proxy-1, lab-proxy-1-srv" });
    expect(resolveConfig([{ hostname: "lb-1" }, env]).namespaces).toEqual(["lab-proxy-1", "lab-proxy-1-srv"]);
    expect(() => resolveConfig([{ namespaces: ["../etc"] }])).toThrow(/namespaces/);
  });

  it("keeps the offline buffer on disk by default; empty turns the spool off", () => {
    expect(resolveConfig([{ hostname: "lb-1" }]).spoolDir).toBe("/var/lib/tide-agent/spool");
    expect(resolveConfig([{ hostname: "lb-1" }, configFromEnv({ TIDE_SPOOL_DIR: "" })]).spoolDir).toBeNull();
    expect(resolveConfig([{ spoolDir: null }]).spoolDir).toBeNull();
    const env = configFromEnv({ TIDE_SPOOL_DIR: "/srv/spool", TIDE_BUFFER_MAX_MIB: 64 });
    expect(resolveConfig([{ hostname: "lb-1" }, env])).toMatchObject({
      spoolDir: "/srv/spool",
      bufferMaxMiB: 64,
    });
    expect(() => resolveConfig([{ bufferMaxMiB: 1 }])).toThrow(/bufferMaxMiB/);
  });

  it("takes tide-probes' pin directory from the file or TIDE_PROBES_PIN_DIR; none by default", () => {
    expect(resolveConfig([{ hostname: "lb-1" }]).probesPinDir).toBeNull();
    const env = configFromEnv({ TIDE_PROBES_PIN_DIR: "/sys/fs/bpf/tide-probes" });
    expect(resolveConfig([{ probesPinDir: "/run/x" }, env]).probesPinDir).toBe("/sys/fs/bpf/tide-probes");
  });

  it("rejects a buffer under 10 minutes and a console without a token file", () => {
    expect(() => resolveConfig([{ bufferMinutes: 5 }])).toThrow(/bufferMinutes/);
    expect(() => resolveConfig([{ consoleUrl: "https://console.example" }])).toThrow(/hostTokenFile/);
  });
});

describe("parseArgs", () => {
  it("parses doctor options", () => {
    expect(parseArgs(["doctor", "--seconds", "5", "--json"])).toMatchObject({
      command: "doctor",
      seconds: 5,
      json: true,
    });
    expect(parseArgs([])).toMatchObject({ command: "run" });
    expect(() => parseArgs(["doctor", "--seconds", "0"])).toThrow();
  });
});
