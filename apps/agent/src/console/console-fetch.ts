import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { rootCertificates } from "node:tls";

/**
 * The HTTP client of the console link and of `tide-agent enroll`: a `fetch` built on node:http and
 * node:https, because the global fetch (undici) cannot be given a CA. It trusts `caFile` alone when
 * one is configured, else the system's CAs: Debian's bundle (SYSTEM_CA_BUNDLE, where
 * update-ca-certificates puts a site's own CA) when it is there, else the CAs built into Node.
 *
 * Only what ConsoleLink and enroll use is supported: a string or URL, method, headers, a string or
 * byte body, and an AbortSignal (each call has a timeout). Answers are read whole (the largest is
 * a director table, a few MiB). A TLS certificate the agent cannot trust fails with a
 * ConsoleTlsError that says why and what to do, once per attempt like any unreachable console.
 */

/** Debian's (and Ubuntu's) bundle of the system's trusted CAs (ca-certificates). */
export const SYSTEM_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";

export interface ConsoleFetchOptions {
  /** PEM file of the CA(s) to trust instead of the system's; null/absent = the system's. */
  caFile?: string | null;
  /** The system's bundle (tests point it elsewhere); default SYSTEM_CA_BUNDLE. */
  systemCaBundle?: string;
  /** What a TLS error tells the operator to do about an untrusted CA (enroll: "pass --ca-file"). */
  caRemedy?: string;
}

/** A fetch for the console, and how to let go of its kept-alive connections. */
export type ConsoleFetch = typeof fetch & {
  /** Where the trusted CAs come from: "caFile /x.pem", "system CAs (/etc/ssl/…)" or "Node's CAs". */
  readonly trust: string;
  /** Close idle kept-alive connections (the agent stopping or reloading). */
  close(): void;
};

/** Why a TLS certificate was not accepted, in the operator's words. */
export type TlsProblem = "untrusted" | "name" | "expired";

/** OpenSSL's verify codes, as Node reports them, by what the operator must fix. */
const TLS_CODES: Record<string, TlsProblem> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "untrusted",
  UNABLE_TO_GET_ISSUER_CERT: "untrusted",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "untrusted",
  DEPTH_ZERO_SELF_SIGNED_CERT: "untrusted",
  SELF_SIGNED_CERT_IN_CHAIN: "untrusted",
  CERT_UNTRUSTED: "untrusted",
  CERT_REJECTED: "untrusted",
  CERT_SIGNATURE_FAILURE: "untrusted",
  INVALID_CA: "untrusted",
  ERR_TLS_CERT_ALTNAME_INVALID: "name",
  CERT_HAS_EXPIRED: "expired",
  CERT_NOT_YET_VALID: "expired",
};

export const CA_REMEDY_CONFIG = "set caFile to the CA that signed it";
export const CA_REMEDY_ENROLL = "pass --ca-file with the CA that signed it";

/** A console whose TLS certificate this agent does not accept (not a token or sample refusal). */
export class ConsoleTlsError extends Error {
  override readonly name = "ConsoleTlsError";
  constructor(
    readonly problem: TlsProblem,
    /** The console's origin, e.g. https://tide.example.net. */
    readonly origin: string,
    /** OpenSSL's or Node's own words, e.g. "unable to verify the first certificate". */
    readonly reason: string,
    caRemedy: string = CA_REMEDY_CONFIG,
  ) {
    super(tlsMessage(problem, origin, reason, caRemedy));
  }
}

/** The one line the operator reads about a certificate that was not accepted. */
export function tlsMessage(problem: TlsProblem, origin: string, reason: string, caRemedy: string): string {
  switch (problem) {
    case "untrusted":
      return `console ${origin}: its TLS certificate is not trusted (${reason}): ${caRemedy}`;
    case "name":
      return (
        `console ${origin}: its TLS certificate is for another name (${reason}): use the name the ` +
        `certificate was issued for in the console URL, or reissue the certificate`
      );
    case "expired":
      return (
        `console ${origin}: its TLS certificate is expired or not yet valid (${reason}): renew it, ` +
        `or check this host's clock`
      );
  }
}

/** The TLS problem behind a request error, or null when it is not one. */
export function tlsProblem(err: unknown): TlsProblem | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? (TLS_CODES[code] ?? null) : null;
}

/**
 * OpenSSL's words, except for a name mismatch: Node's own ("IP: 127.0.0.1 is not in the cert's
 * list: ") lists only the names of the kind asked for, often none; say every name it holds.
 */
function tlsReason(err: Error & { code?: string; cert?: { subjectaltname?: string } }, url: URL): string {
  const names = err.cert?.subjectaltname;
  if (err.code === "ERR_TLS_CERT_ALTNAME_INVALID" && names)
    return `it names ${names.replace(/IP Address:/g, "IP:")}, not ${url.hostname.replace(/^\[(.*)\]$/, "$1")}`;
  return err.message;
}

/** The CAs to trust, and where they come from. Throws when caFile cannot be read or holds no PEM. */
export function loadTrust(o: ConsoleFetchOptions): { ca: string | undefined; trust: string } {
  if (o.caFile) {
    let pem: string;
    try {
      pem = readFileSync(o.caFile, "utf8");
    } catch (err) {
      throw new Error(`caFile ${o.caFile}: ${(err as Error).message}`);
    }
    if (!pem.includes("-----BEGIN CERTIFICATE-----"))
      throw new Error(`caFile ${o.caFile}: no PEM certificate (-----BEGIN CERTIFICATE-----) in it`);
    return { ca: pem, trust: `caFile ${o.caFile}` };
  }
  const bundle = o.systemCaBundle ?? SYSTEM_CA_BUNDLE;
  try {
    const pem = readFileSync(bundle, "utf8");
    if (pem.includes("-----BEGIN CERTIFICATE-----")) return { ca: pem, trust: `system CAs (${bundle})` };
  } catch {
    // No system bundle (not Debian, or ca-certificates not installed): Node's own list.
  }
  return { ca: undefined, trust: `Node's built-in CAs (${rootCertificates.length})` };
}

/** Errors of a kept-alive connection the server closed as it was reused: sent again once. */
const STALE_SOCKET_CODES = new Set(["ECONNRESET", "EPIPE"]);

/** A fetch for the console (see the file comment). Throws when caFile cannot be read. */
export function consoleFetch(o: ConsoleFetchOptions = {}): ConsoleFetch {
  const { ca, trust } = loadTrust(o);
  const caRemedy = o.caRemedy ?? CA_REMEDY_CONFIG;
  const agents = {
    "http:": new http.Agent({ keepAlive: true }),
    "https:": new https.Agent({ keepAlive: true, ca }),
  };

  const once = (url: URL, init: RequestInit, body: Buffer | null): Promise<Response> =>
    new Promise<Response>((resolve, reject) => {
      const signal = init.signal ?? null;
      if (signal?.aborted) {
        reject(signal.reason as Error);
        return;
      }
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, key) => {
        headers[key] = value;
      });
      if (body !== null) headers["content-length"] = String(body.length);
      const lib = url.protocol === "https:" ? https : http;
      const req = lib.request(url, {
        method: init.method ?? "GET",
        headers,
        agent: agents[url.protocol === "https:" ? "https:" : "http:"],
      });
      let settled = false;
      const fail = (err: Error): void => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener("abort", onAbort);
        reject(err);
      };
      const onAbort = (): void => {
        const reason = (signal?.reason as Error | undefined) ?? new Error("aborted");
        req.destroy(reason);
        fail(reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      req.on("error", (err: NodeJS.ErrnoException) => {
        const problem = tlsProblem(err);
        if (problem !== null) {
          fail(new ConsoleTlsError(problem, url.origin, tlsReason(err, url), caRemedy));
          return;
        }
        const retry = req.reusedSocket && STALE_SOCKET_CODES.has(err.code ?? "");
        if (retry && !settled) {
          settled = true;
          signal?.removeEventListener("abort", onAbort);
          once(url, init, body).then(resolve, reject);
          return;
        }
        fail(err);
      });
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", fail);
        res.on("aborted", () => fail(new Error(`${url.origin}: the answer was cut off`)));
        res.on("end", () => {
          if (settled) return;
          settled = true;
          signal?.removeEventListener("abort", onAbort);
          const out = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            if (v === undefined) continue;
            for (const one of Array.isArray(v) ? v : [v]) out.append(k, one);
          }
          const status = res.statusCode ?? 500;
          // A null-body status (204, 304) cannot carry a body, even an empty one.
          const nullBody = status === 204 || status === 304 || init.method === "HEAD";
          resolve(
            new Response(nullBody ? null : Buffer.concat(chunks), {
              status,
              statusText: res.statusMessage ?? "",
              headers: out,
            }),
          );
        });
      });
      req.end(body ?? undefined);
    });

  const fetchFn = (async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    if (typeof input !== "string" && !(input instanceof URL))
      throw new TypeError("consoleFetch takes a URL or a string");
    const url = new URL(input);
    if (url.protocol !== "http:" && url.protocol !== "https:")
      throw new TypeError(`consoleFetch: ${url.protocol} URLs are not supported`);
    return once(url, init, bodyBytes(init.body));
  }) as ConsoleFetch;
  Object.defineProperty(fetchFn, "trust", { value: trust });
  fetchFn.close = () => {
    agents["http:"].destroy();
    agents["https:"].destroy();
  };
  return fetchFn;
}

function bodyBytes(body: RequestInit["body"]): Buffer | null {
  if (body === undefined || body === null) return null;
  if (typeof body === "string") return Buffer.from(body);
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  throw new TypeError("consoleFetch: the body must be a string or bytes");
}
