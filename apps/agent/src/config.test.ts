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

describe("resolveConfig: several consoles", () => {
  const token = { hostTokenFile: "/etc/tide/host-token" };

  it("reads consoleUrl as a list of one, and consoleUrls as they are", () => {
    expect(resolveConfig([{ ...token, consoleUrl: "http://a:3000" }])).toMatchObject({
      consoleUrl: "http://a:3000",
      consoleUrls: ["http://a:3000"],
    });
    expect(resolveConfig([{ ...token, consoleUrls: ["http://a:3000", "http://b:3000"] }])).toMatchObject({
      consoleUrl: "http://a:3000",
      consoleUrls: ["http://a:3000", "http://b:3000"],
    });
    expect(resolveConfig([{ hostname: "lb-1" }])).toMatchObject({ consoleUrl: null, consoleUrls: [] });
  });

  it("takes one URL or a comma-separated list from TIDE_CONSOLE_URL", () => {
    expect(resolveConfig([token, configFromEnv({ TIDE_CONSOLE_URL: "http://a:3000" })]).consoleUrls).toEqual([
      "http://a:3000",
    ]);
    expect(
      resolveConfig([token, configFromEnv({ TIDE_CONSOLE_URL: "http://a:3000, http://b:3000" })]).consoleUrls,
    ).toEqual(["http://a:3000", "http://b:3000"]);
  });

  it("lets a later layer's consoleUrl or consoleUrls replace both of an earlier one", () => {
    const file = { ...token, consoleUrl: "http://old:3000" };
    const env = configFromEnv({ TIDE_CONSOLE_URL: "http://a:3000,http://b:3000" });
    expect(resolveConfig([file, env]).consoleUrls).toEqual(["http://a:3000", "http://b:3000"]);
    const listed = { ...token, consoleUrls: ["http://a:3000", "http://b:3000"] };
    expect(resolveConfig([listed, { consoleUrl: "http://c:3000" }]).consoleUrls).toEqual(["http://c:3000"]);
    expect(resolveConfig([listed, { consoleUrl: null }]).consoleUrls).toEqual([]);
  });

  it("refuses consoleUrl and consoleUrls naming different consoles in one place, in words", () => {
    expect(
      resolveConfig([{ ...token, consoleUrl: "http://a:3000", consoleUrls: ["http://a:3000"] }]).consoleUrls,
    ).toEqual(["http://a:3000"]);
    expect(() =>
      resolveConfig([
        { ...token, consoleUrl: "http://a:3000", consoleUrls: ["http://a:3000", "http://b:3000"] },
      ]),
    ).toThrow(
      "invalid configuration: consoleUrls: consoleUrl and consoleUrls are both set and name different " +
        "consoles: set only one of them (consoleUrls for several consoles)",
    );
  });

  it("refuses an empty list, a repeated URL, a URL that is not one, and a list without a token file", () => {
    expect(() => resolveConfig([{ ...token, consoleUrls: [] }])).toThrow(
      "consoleUrls: must list at least one console URL",
    );
    expect(() => resolveConfig([{ ...token, consoleUrls: ["http://a:3000", "http://a:3000"] }])).toThrow(
      "consoleUrls: lists the same console URL more than once",
    );
    expect(() => resolveConfig([{ ...token, consoleUrls: ["http://a:3000", "console-b"] }])).toThrow(
      "consoleUrls.1: must be an http:// or https:// URL such as https://tide.example.net",
    );
    expect(() => resolveConfig([token, configFromEnv({ TIDE_CONSOLE_URL: "a:3000,," })])).toThrow(
      /consoleUrls\.0: must be an http:\/\/ or https:\/\/ URL/,
    );
    expect(() => resolveConfig([{ consoleUrls: ["http://a:3000"] }])).toThrow(
      "hostTokenFile: hostTokenFile is required when consoleUrl or consoleUrls is set",
    );
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
