import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { sample } from "@tide/diagnostics/fixtures";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consoleFetch, ConsoleTlsError, tlsMessage, tlsProblem } from "./console-fetch";
import { ConsoleLink } from "./console-link";
import { testHello } from "./testing";

/**
 * consoleFetch against real TLS on loopback: a CA and two leaves made here with openssl, one for
 * 127.0.0.1 and one for another name, each served by node:https on 127.0.0.1.
 */

const OPENSSL_CNF = `[req]
distinguished_name = dn
[dn]
[ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
[leaf]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = \${ENV::SAN}
`;

let dir: string;
let caFile: string;
const servers: Server[] = [];
/** https://127.0.0.1:port of the console whose certificate names 127.0.0.1. */
let goodUrl: string;
/** https://127.0.0.1:port of a console whose certificate names console.other.example only. */
let otherNameUrl: string;
/** TCP connections the good console accepted (each attempt of an untrusting client is one). */
let goodConnections = 0;

/** `openssl req -x509`: a P-256 key and a certificate, self-signed (CA) or signed by the CA. */
function makeCert(name: string, extensions: "ca" | "leaf", san: string): { key: string; cert: string } {
  const key = path.join(dir, `${name}.key`);
  const cert = path.join(dir, `${name}.pem`);
  const args = ["req", "-x509", "-config", path.join(dir, "openssl.cnf"), "-extensions", extensions];
  args.push("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2");
  args.push("-keyout", key, "-out", cert, "-subj", `/CN=${name}`);
  if (extensions === "leaf") args.push("-CA", caFile, "-CAkey", path.join(dir, "ca.key"));
  execFileSync("openssl", args, { env: { ...process.env, SAN: san }, stdio: "pipe" });
  return { key: readFileSync(key, "utf8"), cert: readFileSync(cert, "utf8") };
}

/** Answers with what it was asked: method, path, headers, body. */
function echo(req: IncomingMessage, res: ServerResponse): void {
  let body = "";
  req.setEncoding("utf8");
  req.on("data", (c: string) => (body += c));
  req.on("end", () => {
    if (req.url === "/empty") {
      res.writeHead(204).end();
      return;
    }
    if (req.url === "/slow") return; // never answers
    res.writeHead(req.url === "/missing" ? 404 : 200, { "content-type": "application/json", "x-seen": "1" });
    res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body }));
  });
}

async function serve(server: Server | ReturnType<typeof createHttpServer>): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return String((server.address() as AddressInfo).port);
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "tide-tls-"));
  writeFileSync(path.join(dir, "openssl.cnf"), OPENSSL_CNF);
  caFile = path.join(dir, "ca.pem");
  makeCert("ca", "ca", "IP:127.0.0.1");
  const good = createServer(makeCert("console", "leaf", "IP:127.0.0.1,DNS:localhost"), echo);
  const other = createServer(makeCert("other", "leaf", "DNS:console.other.example"), echo);
  good.on("connection", () => goodConnections++);
  servers.push(good, other);
  goodUrl = `https://127.0.0.1:${await serve(good)}`;
  otherNameUrl = `https://127.0.0.1:${await serve(other)}`;
});

afterAll(() => {
  for (const s of servers) s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("consoleFetch over TLS", () => {
  it("trusts the console's certificate with caFile, and sends method, headers and body", async () => {
    const f = consoleFetch({ caFile });
    try {
      expect(f.trust).toBe(`caFile ${caFile}`);
      const res = await f(new URL("/api/v1/agent/hello", goodUrl), {
        method: "POST",
        headers: { authorization: "Bearer tide_host_x", "content-type": "application/json" },
        body: JSON.stringify({ a: 1 }),
        signal: AbortSignal.timeout(5_000),
      });
      expect(res.status).toBe(200);
      expect(res.ok).toBe(true);
      expect(res.headers.get("x-seen")).toBe("1");
      const seen = (await res.json()) as {
        method: string;
        url: string;
        headers: Record<string, string>;
        body: string;
      };
      expect(seen).toMatchObject({ method: "POST", url: "/api/v1/agent/hello", body: '{"a":1}' });
      expect(seen.headers).toMatchObject({ authorization: "Bearer tide_host_x", "content-length": "7" });
      // A second call reuses the kept-alive connection and still works.
      const again = await f(`${goodUrl}/missing`);
      expect(again.status).toBe(404);
      expect(again.ok).toBe(false);
      expect(((await again.json()) as { method: string }).method).toBe("GET");
      expect((await f(`${goodUrl}/empty`)).status).toBe(204);
    } finally {
      f.close();
    }
  });

  it("without caFile, refuses a certificate of a CA the system does not know, saying what to do", async () => {
    const f = consoleFetch();
    try {
      const err = await f(`${goodUrl}/x`).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConsoleTlsError);
      expect((err as ConsoleTlsError).problem).toBe("untrusted");
      expect((err as Error).message).toBe(
        `console ${goodUrl}: its TLS certificate is not trusted (unable to verify the first certificate): ` +
          "set caFile to the CA that signed it",
      );
    } finally {
      f.close();
    }
  });

  it("refuses a trusted CA's certificate for another host name", async () => {
    const f = consoleFetch({ caFile });
    try {
      const err = await f(`${otherNameUrl}/x`).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConsoleTlsError);
      expect((err as ConsoleTlsError).problem).toBe("name");
      expect((err as Error).message).toBe(
        `console ${otherNameUrl}: its TLS certificate is for another name ` +
          "(it names DNS:console.other.example, not 127.0.0.1): use the name the certificate was issued " +
          "for in the console URL, or reissue the certificate",
      );
    } finally {
      f.close();
    }
  });

  it("refuses a caFile that cannot be read or holds no certificate", () => {
    expect(() => consoleFetch({ caFile: path.join(dir, "nope.pem") })).toThrow(/caFile .*nope\.pem: ENOENT/);
    const notPem = path.join(dir, "not.pem");
    writeFileSync(notPem, "hello\n");
    expect(() => consoleFetch({ caFile: notPem })).toThrow(/no PEM certificate/);
  });

  it("names expired certificates and leaves other errors alone", () => {
    expect(tlsProblem({ code: "CERT_HAS_EXPIRED" })).toBe("expired");
    expect(tlsProblem({ code: "DEPTH_ZERO_SELF_SIGNED_CERT" })).toBe("untrusted");
    expect(tlsProblem({ code: "ECONNREFUSED" })).toBeNull();
    expect(tlsProblem(new Error("x"))).toBeNull();
    expect(tlsMessage("expired", "https://x", "certificate has expired", "")).toBe(
      "console https://x: its TLS certificate is expired or not yet valid (certificate has expired): renew it, or check this host's clock",
    );
  });
});

describe("consoleFetch over plain HTTP", () => {
  it("answers, and a call's signal ends it with the signal's reason", async () => {
    const server = createHttpServer(echo);
    const url = `http://127.0.0.1:${await serve(server)}`;
    const f = consoleFetch();
    try {
      expect(((await (await f(`${url}/a`, { method: "GET" })).json()) as { url: string }).url).toBe("/a");
      const err = await f(`${url}/slow`, { signal: AbortSignal.timeout(100) }).then(
        () => null,
        (e: unknown) => e,
      );
      expect((err as Error).name).toBe("TimeoutError");
      const refused = await f("http://127.0.0.1:1/").then(
        () => null,
        (e: unknown) => e,
      );
      expect((refused as Error).message).toMatch(/ECONNREFUSED/);
    } finally {
      f.close();
      server.closeAllConnections();
      server.close();
    }
  });
});

describe("ConsoleLink with an untrusted console certificate", () => {
  it("logs the clear line once a minute, keeps the samples and retries with backoff", async () => {
    const logs: string[] = [];
    const f = consoleFetch();
    const link = new ConsoleLink({
      consoleUrl: goodUrl,
      token: "tide_host_secret",
      bufferCapacity: 100,
      hello: () => testHello("lb-01"),
      log: (line) => logs.push(line),
      onDesired: () => Promise.resolve(),
      fetch: f,
    });
    try {
      const before = goodConnections;
      await link.offer(sample(0), []);
      expect(goodConnections).toBe(before + 1);
      expect(link.failing).toBe("tls");
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatch(
        new RegExp(
          `^console ${goodUrl.replace(/\./g, "\\.")}: its TLS certificate is not trusted \\(unable to verify the first certificate\\): set caFile to the CA that signed it; 1 samples buffered, retry in \\d+ ms$`,
        ),
      );
      // The next attempt, after the backoff (1 s to 1.2 s), fails the same way and is not logged again.
      await new Promise((r) => setTimeout(r, 1_300));
      await link.offer(sample(1), []);
      expect(goodConnections).toBe(before + 2);
      expect(link.buffer.size).toBe(2);
      expect(link.failing).toBe("tls");
      expect(link.lastError).toMatch(/not trusted/);
      expect(logs).toHaveLength(1);
    } finally {
      await link.close();
      f.close();
    }
  });
});
