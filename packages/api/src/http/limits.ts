import { errorCodes, type ErrorCode } from "@tide/contracts";
import type { Context } from "../context";
import { httpEnv } from "../env";

/**
 * What every API request goes through before a procedure sees it: the caller is authenticated
 * before a byte of its body is read, and bodies are capped (Content-Length first, then while
 * streaming, for clients that lie or send chunked). Caps per route:
 * - POST /api/v1/agent/observations: TIDE_MAX_AGENT_BODY_BYTES (default 16 MiB), agent ingest;
 * - every other REST and tRPC body: TIDE_MAX_BODY_BYTES (default 1 MiB).
 */

/** The agent ingest path (under /api/v1); it alone gets the larger cap. */
export const AGENT_INGEST_PATH = "/agent/observations";

/**
 * REST paths whose body is itself the credential, read from callers with none: POST /enroll, where
 * a new host presents its enrollment token. They get ENROLL_BODY_BYTES, not the general cap.
 */
export const ANONYMOUS_BODY_PATHS: ReadonlySet<string> = new Set(["/enroll"]);

/**
 * Body cap of the anonymous routes, bytes: EnrollIn is at most ~450 bytes of JSON (token 200,
 * agent version 64, kernel release 128 characters, plus keys); 4 KiB leaves room for escapes while
 * anyone on the network can make the console read no more than that per request.
 */
export const ENROLL_BODY_BYTES = 4 * 1024;

function normalizedPath(restPath: string | null): string | undefined {
  return restPath?.replace(/\/+$/, "").toLowerCase();
}

/** Body cap in bytes for a REST path (relative to /api/v1) or for tRPC (path null). */
export function bodyLimitFor(restPath: string | null): number {
  const env = httpEnv();
  const normalized = normalizedPath(restPath);
  if (normalized !== undefined && ANONYMOUS_BODY_PATHS.has(normalized)) return ENROLL_BODY_BYTES;
  return normalized === AGENT_INGEST_PATH ? env.TIDE_MAX_AGENT_BODY_BYTES : env.TIDE_MAX_BODY_BYTES;
}

/** A refusal decided before the procedure runs. */
export class RequestRefusal {
  constructor(
    readonly code: ErrorCode,
    readonly message: string,
  ) {}

  get status(): number {
    return errorCodes[this.code];
  }
}

/** Methods whose body the API reads; any other method's body is dropped unread. */
export function takesBody(method: string): boolean {
  return method === "POST" || method === "PUT" || method === "PATCH";
}

/**
 * Refuse a body-bearing request from a caller who is not authenticated, before reading the body;
 * REST `restPath`s in ANONYMOUS_BODY_PATHS take anyone's (capped) body.
 */
export function refuseAnonymousBody(ctx: Context, restPath: string | null = null): RequestRefusal | null {
  if (ctx.actor || ctx.host) return null;
  const normalized = normalizedPath(restPath);
  if (normalized !== undefined && ANONYMOUS_BODY_PATHS.has(normalized)) return null;
  return new RequestRefusal(
    "unauthorized",
    ctx.hostTokenPresented
      ? "Unknown or revoked host token."
      : "Sign in, or send an API token as 'Authorization: Bearer tide_…'.",
  );
}

function mib(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MiB` : `${bytes / 1024} KiB`;
}

function tooLarge(limit: number): RequestRefusal {
  return new RequestRefusal(
    "payload_too_large",
    `The request body is larger than this route's limit of ${mib(limit)}.`,
  );
}

/**
 * The body as text, read at most `limit` bytes (413 past it, without reading the rest) and
 * decoded as strict UTF-8 (400 on invalid bytes).
 */
export async function readBodyCapped(req: Request, limit: number): Promise<string | RequestRefusal> {
  const declared = req.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) return tooLarge(limit);
  if (!req.body) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      return tooLarge(limit);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return new RequestRefusal("bad_request", "The request body is not valid UTF-8.");
  }
}

const SEND_JSON_OBJECT = "Send a JSON object body ({} at least) with 'content-type: application/json'.";

function isJsonContentType(value: string | null): boolean {
  return value !== null && /^application\/json\s*(;|$)/i.test(value.trim());
}

/**
 * A REST mutation's body: it must be a JSON object (`null`, arrays, strings and numbers are
 * refused, never spread into the input). Returns the text to pass on, or the refusal.
 */
export async function readJsonObjectBody(req: Request, limit: number): Promise<string | RequestRefusal> {
  const read = await readJsonObject(req, limit);
  return read instanceof RequestRefusal ? read : read.text;
}

/** readJsonObjectBody, with the object it parsed (for a handler that uses it as it is). */
export async function readJsonObject(
  req: Request,
  limit: number,
): Promise<{ text: string; value: object } | RequestRefusal> {
  const contentType = req.headers.get("content-type");
  if (contentType !== null && !isJsonContentType(contentType)) {
    return new RequestRefusal(
      "unsupported_media_type",
      `Unsupported content type "${contentType}". ${SEND_JSON_OBJECT}`,
    );
  }
  const text = await readBodyCapped(req, limit);
  if (text instanceof RequestRefusal) return text;
  if (text.trim() === "")
    return new RequestRefusal("bad_request", `The request has no body. ${SEND_JSON_OBJECT}`);
  if (contentType === null) {
    return new RequestRefusal(
      "unsupported_media_type",
      `The request has no content type. ${SEND_JSON_OBJECT}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return new RequestRefusal("bad_request", `The request body is not valid JSON. ${SEND_JSON_OBJECT}`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    const got = parsed === null ? "null" : Array.isArray(parsed) ? "an array" : `a ${typeof parsed}`;
    return new RequestRefusal(
      "bad_request",
      `The request body must be a JSON object, got ${got}. ${SEND_JSON_OBJECT}`,
    );
  }
  return { text, value: parsed };
}

/** The headers to pass on with a body the handler has already read (or dropped). */
export function forwardedHeaders(headers: Headers, hasBody: boolean): Headers {
  const out = new Headers(headers);
  out.delete("content-length");
  out.delete("transfer-encoding");
  if (!hasBody) out.delete("content-type");
  return out;
}
