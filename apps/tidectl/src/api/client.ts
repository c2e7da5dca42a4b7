/**
 * The REST client of the API commands: one base URL (…/api/v1), one bearer token, JSON in and out.
 * API errors become ApiError (exit 1) carrying the server's message and field errors; the token
 * never appears in anything this module prints.
 */
import { CommandError, UsageError } from "../cli-io";

export type FetchFn = (input: string, init: RequestInit) => Promise<Response>;

export interface ApiConfig {
  /** Console base URL without /api/v1, e.g. http://localhost:3000. */
  url: string;
  token: string;
}

/** An error reply of the API: message, tRPC code, Tide's closed code and field errors. */
export class ApiError extends CommandError {
  override name = "ApiError";
  constructor(
    readonly status: number,
    readonly tideCode: string | null,
    readonly serverMessage: string,
    /** Field path (e.g. "binds.0.address") -> message. */
    readonly fields: Record<string, string>,
  ) {
    const lines = Object.entries(fields).map(([path, message]) => `\n  ${path}: ${message}`);
    super(`${serverMessage} (HTTP ${status}${tideCode ? `, ${tideCode}` : ""})${lines.join("")}`);
  }
}

const TOKEN_PREFIX = "tide_";
const HOST_TOKEN_PREFIX = "tide_host_";

/** Checks URL and token before any request; bad configuration is bad usage (exit 2). */
export function checkConfig(url: string, token: string | undefined): ApiConfig {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`--url / TIDE_URL: not a URL: ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    throw new UsageError(`--url / TIDE_URL: must be http:// or https://, got ${parsed.protocol}`);
  if (parsed.username || parsed.password)
    throw new UsageError("--url / TIDE_URL: must not contain credentials; pass the token with TIDE_TOKEN");
  if (token === undefined)
    throw new UsageError("no API token: set TIDE_TOKEN (or pass --token) to an API token tide_…");
  if (token.startsWith(HOST_TOKEN_PREFIX))
    throw new UsageError(
      "that is a host token (tide_host_…), which only the agent endpoints accept; use an API token",
    );
  if (!token.startsWith(TOKEN_PREFIX) || /\s/.test(token))
    throw new UsageError("the API token must look like tide_… (no spaces); check TIDE_TOKEN / --token");
  return { url: parsed.href.replace(/\/+$/, ""), token };
}

function fieldErrors(body: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  const data = body.data as { details?: { fields?: unknown } } | undefined;
  const fields = data?.details?.fields;
  if (fields && typeof fields === "object") {
    for (const [path, message] of Object.entries(fields)) out[path] = String(message);
  }
  // Input validation failures (trpc-to-openapi) list zod issues instead.
  if (Array.isArray(body.issues)) {
    for (const issue of body.issues as { path?: unknown[]; message?: unknown }[]) {
      const path = Array.isArray(issue.path) && issue.path.length > 0 ? issue.path.join(".") : "(input)";
      if (!(path in out)) out[path] = String(issue.message ?? "invalid");
    }
  }
  return out;
}

export class ApiClient {
  constructor(
    private readonly config: ApiConfig,
    private readonly fetchFn: FetchFn,
  ) {}

  get baseUrl(): string {
    return this.config.url;
  }

  /** Removes the token from text that may be shown (server messages, network errors). */
  redact(text: string): string {
    return text.split(this.config.token).join("tide_…(redacted)");
  }

  /**
   * One API call; `path` starts with "/" and is relative to /api/v1 (GET and DELETE inputs go in
   * its query). Returns the parsed JSON reply.
   */
  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const url = `${this.config.url}/api/v1${path}`;
    // The REST handler reads inputs of GET and DELETE from the query and refuses (415) any other
    // method without a JSON body, so those always send one, if only {}.
    const payload = method === "GET" || method === "DELETE" ? undefined : (body ?? {});
    let res: Response;
    try {
      res = await this.fetchFn(url, {
        method,
        headers: {
          authorization: `Bearer ${this.config.token}`,
          accept: "application/json",
          ...(payload === undefined ? {} : { "content-type": "application/json" }),
        },
        body: payload === undefined ? undefined : JSON.stringify(payload),
      });
    } catch (e) {
      const cause = e instanceof Error ? ((e.cause as Error | undefined)?.message ?? e.message) : String(e);
      throw new CommandError(this.redact(`cannot reach ${this.config.url}: ${cause}`));
    }
    const text = await res.text();
    let json: unknown = null;
    if (text !== "") {
      try {
        json = JSON.parse(text);
      } catch {
        throw new CommandError(
          this.redact(`${method} ${path}: HTTP ${res.status}, not a JSON reply: ${text.slice(0, 200)}`),
        );
      }
    }
    if (!res.ok) {
      const b = (json && typeof json === "object" ? json : {}) as Record<string, unknown>;
      const data = b.data as { tideCode?: unknown } | undefined;
      throw new ApiError(
        res.status,
        typeof data?.tideCode === "string" ? data.tideCode : null,
        this.redact(typeof b.message === "string" ? b.message : `${method} ${path} failed`),
        Object.fromEntries(Object.entries(fieldErrors(b)).map(([k, v]) => [k, this.redact(v)])),
      );
    }
    return json as T;
  }
}
