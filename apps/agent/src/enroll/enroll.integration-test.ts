/**
 * `tide-agent enroll` against the console's real enrollment API: packages/api's REST handler
 * in-process (restCall) behind a node:http server on 127.0.0.1, over the integration tier's
 * throwaway PostgreSQL. An admin makes a token; the agent trades it, writes its files, and the host
 * token it wrote is accepted by /agent/hello; the spent token is refused in the console's words.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { EnrollmentTokenCreated } from "@tide/contracts";
import type { ApiFixtures } from "@tide/devstack";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testHello, useConsoleDb } from "../console/testing";
import { runEnroll } from "./enroll";

const HOST = "lb-enroll-01";
const c = useConsoleDb("agent-enroll-unused");

let server: Server;
let consoleUrl: string;
let dir: string;
let createToken: (hostname: string) => Promise<EnrollmentTokenCreated>;

beforeAll(async () => {
  const { loadApiFixtures } = await import("@tide/devstack");
  const fixtures = (await loadApiFixtures()) as ApiFixtures;
  const admin = await fixtures.makeUser(c.db, "admin");
  const caller = fixtures.callerFor(c.db, admin) as unknown as {
    enrollmentTokens: {
      create: (i: { hostname: string; roles: string[] }) => Promise<EnrollmentTokenCreated>;
    };
  };
  createToken = (hostname) => caller.enrollmentTokens.create({ hostname, roles: ["proxy"] });
  // The REST handler behind real HTTP: what the agent's client sends is what the console reads.
  server = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      const route = (req.url ?? "").replace(/^\/api\/v1/, "");
      void c
        .restCall(c.db, req.method ?? "GET", route, {
          body: body ? (JSON.parse(body) as unknown) : undefined,
        })
        .then((r) =>
          res.writeHead(r.status, { "content-type": "application/json" }).end(JSON.stringify(r.body)),
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  consoleUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The URL the console puts in the command it gives the admin (read once, at the first token).
  process.env.TIDE_PUBLIC_URL = consoleUrl;
  dir = mkdtempSync(path.join(tmpdir(), "tide-enroll-it-"));
});

afterAll(() => {
  server?.closeAllConnections();
  server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function enroll(args: string[]): Promise<{ code: number; out: string }> {
  let out = "";
  const code = await runEnroll(
    [
      ...args,
      "--config",
      path.join(dir, "agent.json"),
      "--token-file",
      path.join(dir, "host-token"),
      "--no-start",
    ],
    { stdout: (t) => (out += t), stderr: (t) => (out += t) },
  );
  return { code, out };
}

describe("tide-agent enroll <-> the console's enrollment API", () => {
  it("enrolls with the command the console gave, and the host token it wrote says hello as that host", async () => {
    const created = await createToken(HOST);
    const [program, verb, ...args] = created.command.split(" ");
    expect([program, verb]).toEqual(["tide-agent", "enroll"]);
    expect(args).toEqual([consoleUrl, "--token", created.token]);
    const r = await enroll(args);
    expect(r.out).not.toContain(created.token);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain(`this host is enrolled as ${HOST} with roles proxy`);
    const config = JSON.parse(readFileSync(path.join(dir, "agent.json"), "utf8")) as { hostname: string };
    expect(config.hostname).toBe(HOST);
    const hostToken = readFileSync(path.join(dir, "host-token"), "utf8").trim();
    expect(hostToken).toMatch(/^tide_host_/);
    const hello = await c.restCall(c.db, "POST", "/agent/hello", { token: hostToken, body: testHello(HOST) });
    expect(hello.status, JSON.stringify(hello.body)).toBe(200);

    // The same token again (with --force, past the files check): the console's plain refusal.
    const again = await enroll([consoleUrl, "--token", created.token, "--force"]);
    expect(again.code).toBe(1);
    expect(again.out).toMatch(
      new RegExp(
        `^tide-agent enroll: the console refused the enrollment: This enrollment token was already used by ${HOST} at `,
      ),
    );
    expect(again.out).not.toContain(created.token);
    // The files of the first enrollment are untouched.
    expect(readFileSync(path.join(dir, "host-token"), "utf8").trim()).toBe(hostToken);
  });

  it("prints the console's words for a token it does not know", async () => {
    const r = await enroll([consoleUrl, "--token", "tide_enroll_notatokenatall", "--force"]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(
      /^tide-agent enroll: the console refused the enrollment: This is not a valid enrollment token/,
    );
  });
});
