/** The API commands in-process against a fake fetch: arguments, requests, output, exit codes. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../cli";
import { parseBind } from "./binds";

const TOKEN = "tide_s3cr3t-token-value";

interface Seen {
  method: string;
  url: string;
  auth: string | null;
  body: unknown;
}

type Handler = (
  req: Seen,
) => { status?: number; body: unknown } | Promise<{ status?: number; body: unknown }>;

let dir = "";
let out = "";
let err = "";
let seen: Seen[] = [];
let routes: Record<string, Handler> = {};
let env: Record<string, string | undefined> = {};

/** A fetch that answers from `routes` ("METHOD /path?query" under /api/v1) and records each request. */
async function fakeFetch(input: string, init: RequestInit): Promise<Response> {
  const headers = new Headers(init.headers);
  const req: Seen = {
    method: init.method ?? "GET",
    url: input,
    auth: headers.get("authorization"),
    body: typeof init.body === "string" ? JSON.parse(init.body) : undefined,
  };
  seen.push(req);
  // Like trpc-to-openapi: a body-carrying method needs a JSON body, GET/DELETE take none.
  const bodyMethod = !["GET", "DELETE"].includes(req.method);
  if (
    bodyMethod !== (headers.get("content-type") === "application/json") ||
    bodyMethod !== (req.body !== undefined)
  )
    return new Response(
      JSON.stringify({ message: "Unsupported content-type", code: "UNSUPPORTED_MEDIA_TYPE" }),
      {
        status: 415,
      },
    );
  const u = new URL(input);
  const key = `${req.method} ${u.pathname.replace(/^\/api\/v1/, "")}${u.search}`;
  const handler = routes[key];
  if (!handler)
    return new Response(JSON.stringify({ message: `no route ${key}`, code: "NOT_FOUND" }), { status: 404 });
  const r = await handler(req);
  return new Response(JSON.stringify(r.body), {
    status: r.status ?? 200,
    headers: { "content-type": "application/json" },
  });
}

const run = (...argv: string[]) =>
  runCli(argv, {
    stdout: (t) => void (out += t),
    stderr: (t) => void (err += t),
    cwd: dir,
    env,
    fetch: fakeFetch,
  });

const www = {
  id: "pool_wwwwwwww",
  name: "www",
  description: "web",
  hashFields: ["src_addr"],
  binds: [
    { id: "bnd_1111", address: "203.0.113.10", prefixBits: 32, proto: "tcp", portStart: 443, portEnd: 443 },
    { id: "bnd_2222", address: "203.0.113.64", prefixBits: 26, proto: "tcp", portStart: 8000, portEnd: 8099 },
  ],
  proxyCounts: { active: 2, draining: 1, inactive: 0, filling: 0, unhealthy: 1 },
  directorIds: ["dir_aaaaaaaa"],
  currentVersion: { id: "tv_1111", version: 7, reason: "", cause: "x" },
};
const proxies = [
  {
    id: "prx_aaaa1111",
    poolId: www.id,
    address: "10.0.0.1",
    hostname: "proxy-1",
    state: "active",
    health: { healthy: true, reason: "" },
    slot: 0,
  },
  {
    id: "prx_bbbb2222",
    poolId: www.id,
    address: "10.0.0.2",
    hostname: "proxy-2",
    state: "active",
    health: { healthy: true, reason: "" },
    slot: 1,
  },
];
const director = { id: "dir_aaaaaaaa", hostname: "director-1", poolIds: [] as string[] };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "tidectl-api-"));
  out = "";
  err = "";
  seen = [];
  env = { TIDE_TOKEN: TOKEN };
  routes = {
    "GET /pools": () => ({ body: [www] }),
    "GET /proxies": () => ({ body: proxies }),
    "GET /directors": () => ({ body: [director] }),
  };
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("connection settings", () => {
  it("sends the token from TIDE_TOKEN to TIDE_URL's /api/v1, flags overriding the environment", async () => {
    env.TIDE_URL = "http://console.example:8080/";
    expect(await run("pool", "list")).toBe(0);
    expect(seen).toMatchObject([
      { method: "GET", url: "http://console.example:8080/api/v1/pools", auth: `Bearer ${TOKEN}` },
    ]);
    seen = [];
    expect(await run("pool", "list", "--url", "https://tide.example", "--token", "tide_other")).toBe(0);
    expect(seen).toMatchObject([{ url: "https://tide.example/api/v1/pools", auth: "Bearer tide_other" }]);
    seen = [];
    delete env.TIDE_URL;
    expect(await run("pool", "list")).toBe(0);
    expect(seen[0]!.url).toBe("http://localhost:3000/api/v1/pools");
  });

  it.each([
    ["no token", [], {}, /no API token: set TIDE_TOKEN/],
    ["a host token", ["--token", "tide_host_abc"], {}, /host token/],
    ["a token of another kind", ["--token", "ghp_abc"], {}, /must look like tide_/],
    ["a URL that is not one", ["--url", "localhost:3000"], { TIDE_TOKEN: TOKEN }, /must be http/],
    [
      "a URL with credentials",
      ["--url", "http://u:p@x"],
      { TIDE_TOKEN: TOKEN },
      /must not contain credentials/,
    ],
  ])("refuses %s with exit 2 before any request", async (_what, flags, e, message) => {
    env = e;
    expect(await run("pool", "list", ...flags)).toBe(2);
    expect(err).toMatch(message);
    expect(seen).toEqual([]);
  });

  it("never prints the token, even when the server echoes it", async () => {
    routes["GET /pools"] = (req) => ({
      status: 401,
      body: { message: `bad token ${req.auth}`, code: "UNAUTHORIZED", data: { tideCode: "unauthorized" } },
    });
    expect(await run("pool", "list")).toBe(1);
    expect(err).toContain("bad token Bearer tide_…(redacted) (HTTP 401, unauthorized)");
    expect(err + out).not.toContain("s3cr3t");
  });

  it("says when the console cannot be reached (exit 1)", async () => {
    expect(
      await runCli(["pool", "list"], {
        stdout: (t) => void (out += t),
        stderr: (t) => void (err += t),
        cwd: dir,
        env,
        fetch: () =>
          Promise.reject(new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED") })),
      }),
    ).toBe(1);
    expect(err).toMatch(/cannot reach http:\/\/localhost:3000: connect ECONNREFUSED/);
  });
});

describe("tidectl pool", () => {
  it("lists pools as a table, and --json prints the reply unchanged", async () => {
    expect(await run("pool", "list")).toBe(0);
    const [header, row] = out.trim().split("\n");
    expect(header).toMatch(/^name\s+id\s+binds\s+hash fields\s+proxies\s+directors\s+version$/);
    expect(row).toContain("tcp 203.0.113.10/32:443, tcp 203.0.113.64/26:8000-8099");
    expect(row).toContain("2 active, 1 draining, 1 unhealthy");
    expect(row).toMatch(/v7$/);
    out = "";
    expect(await run("pool", "list", "--json")).toBe(0);
    expect(JSON.parse(out)).toEqual([www]);
  });

  it("creates a pool from --bind and --hash-fields (parsed, in hashing order)", async () => {
    routes["POST /pools"] = (req) => ({
      body: { ...www, ...(req.body as object), proxies: [], directors: [] },
    });
    expect(
      await run(
        "pool",
        "create",
        "api",
        "--bind",
        "tcp 198.51.100.5:443",
        "--bind",
        "udp:[2001:db8::/64]:53-54",
        "--hash-fields",
        "src_port,src_addr",
      ),
    ).toBe(0);
    expect(seen.at(-1)).toMatchObject({
      method: "POST",
      body: {
        name: "api",
        binds: [
          { proto: "tcp", address: "198.51.100.5", portStart: 443 },
          { proto: "udp", address: "2001:db8::/64", portStart: 53, portEnd: 54 },
        ],
        hashFields: ["src_addr", "src_port"],
      },
    });
    expect(out).toMatch(/^created pool api \(pool_wwwwwwww\)/);
  });

  it.each([
    ["no bind", ["pool", "create", "api"], /at least one --bind/],
    ["a bad bind", ["pool", "create", "api", "--bind", "sctp 1.2.3.4:80"], /expected PROTO ADDRESS/],
    ["a backwards port range", ["pool", "create", "api", "--bind", "tcp 1.2.3.4:90-80"], /backwards/],
    ["an unknown hash field", ["pool", "hash-fields", "www", "src_mac"], /unknown hash field "src_mac"/],
    ["nothing to edit", ["pool", "edit", "www"], /nothing to change/],
    ["a missing argument", ["pool", "show"], /expected <pool>, got 0/],
    ["an extra argument", ["pool", "show", "a", "b"], /expected <pool>, got 2/],
  ])("exits 2 on %s and sends no change", async (_what, argv, message) => {
    expect(await run(...argv)).toBe(2);
    expect(err).toMatch(message);
    expect(seen.filter((s) => s.method !== "GET")).toEqual([]);
  });

  it("prints the API's message and field errors with exit 1", async () => {
    routes[`PUT /pools/${www.id}/binds`] = () => ({
      status: 400,
      body: {
        message: "The binds overlap another pool's.",
        code: "BAD_REQUEST",
        data: {
          tideCode: "bad_request",
          details: { fields: { "binds.0.address": "overlaps pool api's tcp 198.51.100.0/24:443" } },
        },
      },
    });
    expect(await run("pool", "binds", "www", "--bind", "tcp 198.51.100.5:443", "--reason", "move")).toBe(1);
    expect(seen.at(-1)).toMatchObject({
      method: "PUT",
      url: `http://localhost:3000/api/v1/pools/${www.id}/binds`,
      body: { binds: [{ address: "198.51.100.5" }], reason: "move" },
    });
    expect(err).toBe(
      "tidectl pool binds: The binds overlap another pool's. (HTTP 400, bad_request)\n" +
        "  binds.0.address: overlaps pool api's tcp 198.51.100.0/24:443\n",
    );
    expect(out).toBe("");
  });

  it("prints zod issues of a rejected input as field errors", async () => {
    routes[`PATCH /pools/${www.id}`] = () => ({
      status: 400,
      body: {
        message: "Input validation failed",
        code: "BAD_REQUEST",
        issues: [{ path: ["name"], message: "must be 1-63 lower-case letters, digits and dashes" }],
      },
    });
    expect(await run("pool", "edit", "www", "--name", "Bad Name")).toBe(1);
    expect(err).toContain("Input validation failed (HTTP 400)\n  name: must be 1-63 lower-case letters");
  });

  it("previews hash fields without changing them, then sets them", async () => {
    routes[`GET /pools/${www.id}/hash-fields/preview?hashFields=src_addr%2Csrc_port`] = () => ({
      body: {
        from: ["src_addr"],
        to: ["src_addr", "src_port"],
        sampleFlows: 10000,
        flowsMoved: 8312,
        fractionMoved: 0.8312,
      },
    });
    expect(await run("pool", "hash-fields", "www", "src_addr,src_port", "--preview")).toBe(0);
    expect(out).toBe(
      "src_addr -> src_addr,src_port: 8312 of 10000 sampled client flows (83.12%) would change primary proxy\n",
    );
    expect(seen.map((s) => s.method)).toEqual(["GET", "GET"]);
    routes[`PUT /pools/${www.id}/hash-fields`] = (req) => ({
      body: {
        pool: {
          ...www,
          hashFields: (req.body as { hashFields: string[] }).hashFields,
          proxies,
          directors: [director],
        },
        tableVersion: { id: "tv_2", version: 8, reason: "", cause: "" },
      },
    });
    out = "";
    expect(await run("pool", "hash-fields", "www", "src_addr,src_port")).toBe(0);
    expect(seen.at(-1)!.body).toEqual({ hashFields: ["src_addr", "src_port"] });
    expect(out).toMatch(/^hash fields of www set to src_addr,src_port; table version v8 written\n/);
    expect(out).toMatch(/proxy-1\s+10\.0\.0\.1\s+active\s+healthy\s+prx_aaaa1111/);
  });

  it("deletes by name with the reason in the query (DELETE has no body)", async () => {
    routes[`DELETE /pools/${www.id}?reason=retired%20service`] = () => ({
      body: { removed: { id: www.id, name: "www" } },
    });
    expect(await run("pool", "delete", "www", "--reason", "retired service")).toBe(0);
    expect(out).toBe(`deleted pool www (${www.id})\n`);
    expect(seen.at(-1)!.body).toBeUndefined();
  });

  it("exits 1 naming the known pools when a name matches none", async () => {
    expect(await run("pool", "show", "wwww")).toBe(1);
    expect(err).toContain('no pool "wwww" (known: www)');
  });
});

describe("tidectl proxy and director", () => {
  it("drains a proxy named by host name, with a reason", async () => {
    routes["POST /proxies/prx_bbbb2222/drain"] = () => ({
      body: {
        proxy: { ...proxies[1], state: "draining" },
        tableVersion: { id: "tv_9", version: 9, reason: "r", cause: "" },
      },
    });
    expect(await run("proxy", "drain", "proxy-2", "--reason", "kernel upgrade")).toBe(0);
    expect(seen.at(-1)).toMatchObject({ method: "POST", body: { reason: "kernel upgrade" } });
    expect(out).toBe("proxy-2 10.0.0.2 (prx_bbbb2222): draining, healthy; table version v9 written\n");
  });

  it("aborts a drain by host name: POST /proxies/{id}/abort", async () => {
    routes["POST /proxies/prx_bbbb2222/abort"] = () => ({
      body: {
        proxy: { ...proxies[1], state: "active" },
        tableVersion: { id: "tv_10", version: 10, reason: "r", cause: "" },
      },
    });
    expect(await run("proxy", "abort", "proxy-2", "--reason", "wrong proxy")).toBe(0);
    expect(seen.at(-1)).toMatchObject({
      method: "POST",
      url: "http://localhost:3000/api/v1/proxies/prx_bbbb2222/abort",
      body: { reason: "wrong proxy" },
    });
    expect(out).toBe("proxy-2 10.0.0.2 (prx_bbbb2222): active, healthy; table version v10 written\n");
  });

  it("uses an id as is, and refuses an address two proxies share", async () => {
    routes["POST /proxies/prx_aaaa1111/fill"] = () => ({
      status: 409,
      body: {
        message: "proxy-1 is active; only an inactive proxy can fill.",
        data: { tideCode: "invalid_transition" },
      },
    });
    expect(await run("proxy", "fill", "prx_aaaa1111")).toBe(1);
    expect(seen.map((s) => s.url)).toEqual(["http://localhost:3000/api/v1/proxies/prx_aaaa1111/fill"]);
    expect(err).toContain("only an inactive proxy can fill. (HTTP 409, invalid_transition)");
    routes["GET /proxies"] = () => ({ body: [proxies[0], { ...proxies[1], address: "10.0.0.1" }] });
    expect(await run("proxy", "drain", "10.0.0.1")).toBe(1);
    expect(err).toContain('2 proxys match "10.0.0.1"');
  });

  it("assigns a director to a pool by names", async () => {
    routes[`PUT /directors/${director.id}/pools/${www.id}`] = () => ({
      body: { ...director, poolIds: [www.id], pools: [{ id: www.id, name: "www" }] },
    });
    expect(await run("director", "assign", "director-1", "www")).toBe(0);
    expect(seen.map((s) => `${s.method} ${s.url.replace("http://localhost:3000/api/v1", "")}`)).toEqual([
      "GET /directors",
      "GET /pools",
      `PUT /directors/${director.id}/pools/${www.id}`,
    ]);
    expect(out).toBe(`director-1 (${director.id}) serves www\n`);
    expect(seen.at(-1)!.body).toEqual({});
  });

  it("lists directors with pool names", async () => {
    routes["GET /directors"] = () => ({ body: [{ ...director, poolIds: [www.id] }] });
    expect(await run("director", "list")).toBe(0);
    expect(out).toMatch(/director-1\s+dir_aaaaaaaa\s+www\n/);
  });
});

describe("tidectl user", () => {
  const user = {
    id: "usr_aaaa1111",
    email: "ann@example.net",
    name: "Ann",
    role: "operator",
    createdAt: "2026-01-01T00:00:00.000Z",
    disabledAt: null,
  };

  it("creates a user and prints the generated password once", async () => {
    routes["POST /users"] = () => ({ body: { user, password: "generated-password-123" } });
    expect(await run("user", "create", "ann@example.net", "--name", "Ann", "--role", "operator")).toBe(0);
    expect(seen.at(-1)!.body).toEqual({ email: "ann@example.net", name: "Ann", role: "operator" });
    expect(out).toBe(
      `created ann@example.net (usr_aaaa1111), operator, enabled\npassword (shown once): generated-password-123\n`,
    );
  });

  it("takes a chosen password from a file, never from the command line", async () => {
    await writeFile(join(dir, "pw"), "chosen password 42\nignored\n");
    routes["GET /users"] = () => ({ body: [user] });
    routes[`POST /users/${user.id}/reset-password`] = () => ({ body: { user, password: null } });
    expect(await run("user", "reset-password", "Ann@Example.net", "--password-file", "pw")).toBe(0);
    expect(seen.at(-1)!.body).toEqual({ password: "chosen password 42" });
    expect(out).toBe("password reset for ann@example.net\n");
    expect(await run("user", "reset-password", "ann@example.net", "--password-file", "missing")).toBe(1);
    expect(err).toContain("cannot read --password-file missing: ENOENT");
  });

  it("changes a role and refuses an unknown one with exit 2", async () => {
    routes["GET /users"] = () => ({ body: [user] });
    routes[`PATCH /users/${user.id}`] = (req) => ({ body: { ...user, ...(req.body as object) } });
    expect(await run("user", "role", "ann@example.net", "admin")).toBe(0);
    expect(out).toBe("ann@example.net (usr_aaaa1111), admin, enabled\n");
    seen = [];
    expect(await run("user", "role", "ann@example.net", "root")).toBe(2);
    expect(seen).toEqual([]);
  });
});

describe("parseBind", () => {
  it.each([
    ["tcp 203.0.113.10:443", { proto: "tcp", address: "203.0.113.10", portStart: 443 }],
    [
      "tcp:203.0.113.64/26:8000-8099",
      { proto: "tcp", address: "203.0.113.64/26", portStart: 8000, portEnd: 8099 },
    ],
    ["udp [2001:db8::10]:53", { proto: "udp", address: "2001:db8::10", portStart: 53 }],
  ])("parses %s", (text, expected) => {
    expect(parseBind(text)).toEqual(expected);
  });

  it.each(["tcp 203.0.113.10", "tcp 2001:db8::10:53", "tcp 1.2.3.4:70000", "203.0.113.10:443"])(
    "rejects %s",
    (text) => {
      expect(() => parseBind(text)).toThrow(/--bind/);
    },
  );
});
