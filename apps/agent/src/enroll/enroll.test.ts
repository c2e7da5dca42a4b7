import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { EnrollIn, EnrollOut } from "@tide/contracts";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { resolveConfig } from "../config";
import { AGENT_VERSION } from "../version";
import { enrolledConfig, parseEnrollArgs, runEnroll, type Systemctl } from "./enroll";

/**
 * `tide-agent enroll` against a fake console on loopback (node:http): the enrollment API answers as
 * packages/api's REST errors do (`{ code, message }`), files go to a temp dir.
 */

const HOST_TOKEN = "tide_host_s3cretS3cret";
const ENROLLED: Record<string, EnrollOut> = {
  tide_enroll_proxy1: {
    hostId: "host_0001",
    hostname: "lb-01",
    roles: ["proxy"],
    hostToken: HOST_TOKEN,
    consoleVersion: "0.4.0",
  },
  tide_enroll_director1: {
    hostId: "host_0002",
    hostname: "dir-01",
    roles: ["director", "host"],
    hostToken: HOST_TOKEN,
    consoleVersion: "0.4.0",
  },
};
/** Refusals as the console words them (plain English), by token. */
const REFUSED: Record<string, { status: number; code: string; message: string }> = {
  tide_enroll_spent: {
    status: 409,
    code: "conflict",
    message: "This enrollment token was already used (by lb-01, 2026-01-02 10:00 UTC): ask for a new one.",
  },
  tide_enroll_expired: {
    status: 401,
    code: "unauthorized",
    message: "This enrollment token expired at 2026-01-02 11:00 UTC: ask for a new one.",
  },
  tide_enroll_revoked: { status: 401, code: "unauthorized", message: "This enrollment token was revoked." },
  // A console that echoes the token back must not make the agent print it.
  tide_enroll_unknown: {
    status: 401,
    code: "unauthorized",
    message: "Unknown enrollment token tide_enroll_unknown: check that you copied all of it.",
  },
};

let server: Server;
let consoleUrl: string;
const requests: { method: string; url: string; body: EnrollIn }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (text += c));
    req.on("end", () => {
      const body = JSON.parse(text || "{}") as EnrollIn;
      requests.push({ method: req.method ?? "", url: req.url ?? "", body });
      const json = (status: number, b: unknown) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(b));
      if (req.url !== "/api/v1/enroll" || req.method !== "POST")
        return json(404, { code: "not_found", message: "Not found." });
      if (body.token === "tide_enroll_html") return res.writeHead(502).end("<html>Bad gateway</html>");
      const ok = ENROLLED[body.token];
      if (ok !== undefined) return json(200, ok);
      const no = REFUSED[body.token];
      if (no !== undefined) return json(no.status, { code: no.code, message: no.message });
      return json(400, { code: "bad_request", message: "token: is not an enrollment token (tide_enroll_…)" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  consoleUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

let dir: string;
let etc: string;
let configFile: string;
let tokenFile: string;
let systemdDir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "tide-enroll-"));
  // etc/tide does not exist yet: enroll creates it (0755).
  etc = path.join(dir, "etc", "tide");
  configFile = path.join(etc, "agent.json");
  tokenFile = path.join(etc, "host-token");
  systemdDir = path.join(dir, "run-systemd-system");
  requests.length = 0;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Run enroll with the files in the temp dir; systemctl is recorded (and answers `code`). */
async function enroll(
  args: string[],
  o: { systemd?: boolean; systemctlCode?: number; files?: boolean } = {},
): Promise<{ code: number; stdout: string; stderr: string; systemctl: string[] }> {
  let stdout = "";
  let stderr = "";
  const calls: string[] = [];
  const systemctl: Systemctl = (a) => {
    calls.push(a.join(" "));
    const show = a[0] === "show";
    return Promise.resolve({
      code: show ? 0 : (o.systemctlCode ?? 0),
      stdout: show ? "reporting to https://tide.example.net as lb-01" : "",
      stderr: o.systemctlCode ? "Job for tide-agent.service failed." : "",
    });
  };
  if (o.systemd) mkdirSync(systemdDir, { recursive: true });
  const files = o.files === false ? [] : ["--config", configFile, "--token-file", tokenFile];
  const code = await runEnroll([...args, ...files], {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    systemdDir,
    systemctl,
    unitConfigFile: configFile,
  });
  return { code, stdout, stderr, systemctl: calls };
}

const mode = (f: string): string => (statSync(f).mode & 0o777).toString(8);

describe("tide-agent enroll", () => {
  it("trades the token for a host token, writes both files with their modes and starts the unit", async () => {
    // A root shell's umask may be 077: the config must still be readable (0644), the dir 0755.
    const umask = process.umask(0o077);
    const r = await enroll([consoleUrl, "--token", "tide_enroll_proxy1"], { systemd: true }).finally(() =>
      process.umask(umask),
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(requests).toEqual([
      {
        method: "POST",
        url: "/api/v1/enroll",
        body: { token: "tide_enroll_proxy1", agentVersion: AGENT_VERSION, kernelRelease: expect.any(String) },
      },
    ]);
    expect(readFileSync(tokenFile, "utf8")).toBe(`${HOST_TOKEN}\n`);
    expect(mode(tokenFile)).toBe("600");
    expect(mode(configFile)).toBe("644");
    expect(mode(etc)).toBe("755");
    const config = JSON.parse(readFileSync(configFile, "utf8")) as Record<string, unknown>;
    expect(config).toEqual({
      consoleUrl,
      hostTokenFile: tokenFile,
      hostname: "lb-01",
      roles: ["proxy"],
      redirectSocket: "/run/tide/redirect.sock",
    });
    // The agent takes it as it is.
    expect(resolveConfig([config])).toMatchObject({ hostname: "lb-01", consoleUrls: [consoleUrl] });
    expect(r.systemctl).toEqual([
      "enable tide-agent",
      "restart tide-agent",
      "show --property=StatusText --value tide-agent",
    ]);
    expect(r.stdout).toContain(
      "this host is enrolled as lb-01 with roles proxy; tide-agent is running: reporting to https://tide.example.net as lb-01",
    );
    // No temporary files are left behind, and the token is never printed.
    expect(readdirSync(etc).sort()).toEqual(["agent.json", "host-token"]);
    expect(r.stdout + r.stderr).not.toMatch(/tide_enroll_proxy1|s3cret/);
  });

  it("gives a director its socket and a copy of the CA file it was given, beside its configuration", async () => {
    const ca = path.join(dir, "ca.pem");
    writeFileSync(ca, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
    const r = await enroll(
      [`${consoleUrl}/`, "--token", "tide_enroll_director1", "--ca-file", ca, "--no-start"],
      {
        systemd: true,
      },
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(configFile, "utf8"))).toEqual({
      consoleUrl,
      hostTokenFile: tokenFile,
      hostname: "dir-01",
      roles: ["director", "host"],
      caFile: path.join(path.dirname(configFile), "console-ca.pem"),
      directorSocket: "/run/tide/director.sock",
    });
    // The unit cannot read /root or /home (ProtectHome=yes): the CA is copied, readable by all.
    const copied = path.join(path.dirname(configFile), "console-ca.pem");
    expect(readFileSync(copied, "utf8")).toBe(readFileSync(ca, "utf8"));
    expect(statSync(copied).mode & 0o777).toBe(0o644);
    expect(r.systemctl).toEqual([]);
    expect(r.stdout).toContain("not started (--no-start): systemctl enable --now tide-agent starts it");
  });

  it("prints the console's own words and exits 1 for a spent, expired, revoked or unknown token", async () => {
    for (const [token, refusal] of Object.entries(REFUSED)) {
      const r = await enroll([consoleUrl, "--token", token], { systemd: true });
      expect(r.code, token).toBe(1);
      expect(r.stderr, token).toBe(
        `tide-agent enroll: the console refused the enrollment: ${refusal.message.replace(token, "[token]")}\n`,
      );
      expect(r.stdout + r.stderr).not.toContain(token);
      expect(existsSync(configFile) || existsSync(tokenFile)).toBe(false);
      expect(r.systemctl).toEqual([]);
    }
  });

  it("says what a console that is not one answered, or that none answered", async () => {
    const html = await enroll([consoleUrl, "--token", "tide_enroll_html"]);
    expect(html).toMatchObject({
      code: 1,
      stderr: `tide-agent enroll: the console at ${consoleUrl} answered HTTP 502: <html>Bad gateway</html>\n`,
    });
    const none = await enroll(["http://127.0.0.1:1", "--token", "tide_enroll_proxy1"]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(
      /^tide-agent enroll: cannot reach the console at http:\/\/127\.0\.0\.1:1: .*ECONNREFUSED/,
    );
  });

  it("exits 2 with the usage for a bad URL, a missing or foreign token, an unknown option", async () => {
    for (const args of [
      ["ftp://tide.example.net", "--token", "tide_enroll_proxy1"],
      ["tide.example.net", "--token", "tide_enroll_proxy1"],
      [consoleUrl],
      [consoleUrl, "--token", "tide_host_abc"],
      [consoleUrl, "--token", "tide_enroll_proxy1", "--frobnicate"],
      [consoleUrl, "tide_enroll_proxy1"],
    ]) {
      const r = await enroll(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stderr).toContain("usage: tide-agent enroll <console URL> --token");
      expect(r.stderr).not.toMatch(/tide_enroll_proxy1|tide_host_abc/);
    }
    expect(requests).toEqual([]);
    expect(
      (await enroll([consoleUrl, "--token", "tide_enroll_proxy1", "--ca-file", path.join(dir, "none.pem")]))
        .code,
    ).toBe(2);
  });

  it("refuses to replace an enrolled host's files without --force, before spending the token", async () => {
    mkdirSync(etc, { recursive: true });
    writeFileSync(configFile, '{"consoleUrl":"https://old.example.net"}\n');
    const r = await enroll([consoleUrl, "--token", "tide_enroll_proxy1"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `tide-agent enroll: ${configFile} already exists: this host looks enrolled. Pass --force to enroll it again (both are replaced).\n`,
    );
    expect(requests).toEqual([]);
    expect(readFileSync(configFile, "utf8")).toContain("old.example.net");

    const forced = await enroll([consoleUrl, "--token", "tide_enroll_proxy1", "--force"]);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toMatch(/^replaced /);
    expect(JSON.parse(readFileSync(configFile, "utf8"))).toMatchObject({ consoleUrl, hostname: "lb-01" });
    expect(mode(configFile)).toBe("644");
    expect(mode(tokenFile)).toBe("600");
  });

  it("prints how to start the agent when systemd is not running, and fails when systemctl does", async () => {
    const noSystemd = await enroll([consoleUrl, "--token", "tide_enroll_proxy1"]);
    expect(noSystemd.code).toBe(0);
    expect(noSystemd.systemctl).toEqual([]);
    expect(noSystemd.stdout).toContain(
      `this host is enrolled as lb-01 with roles proxy; systemd is not running here: start the agent with tide-agent run --config ${configFile}`,
    );
    const failing = await enroll([consoleUrl, "--token", "tide_enroll_proxy1", "--force"], {
      systemd: true,
      systemctlCode: 1,
    });
    expect(failing.code).toBe(1);
    expect(failing.stderr).toBe(
      "tide-agent enroll: this host is enrolled as lb-01 with roles proxy, but `systemctl enable tide-agent` failed " +
        "(exit 1: Job for tide-agent.service failed.); see journalctl -u tide-agent\n",
    );
  });
});

describe("parseEnrollArgs and enrolledConfig", () => {
  it("defaults to the installed layout", () => {
    expect(parseEnrollArgs(["https://tide.example.net", "--token", "tide_enroll_x"])).toEqual({
      consoleUrl: "https://tide.example.net",
      token: "tide_enroll_x",
      configFile: "/etc/tide/agent.json",
      tokenFile: "/etc/tide/host-token",
      caFile: null,
      force: false,
      start: true,
    });
    expect(
      enrolledConfig(
        { consoleUrl: "https://t", tokenFile: "/etc/tide/host-token", caFile: null },
        { hostname: "h", roles: ["host"] },
      ),
    ).toEqual({
      consoleUrl: "https://t",
      hostTokenFile: "/etc/tide/host-token",
      hostname: "h",
      roles: ["host"],
    });
  });
});
