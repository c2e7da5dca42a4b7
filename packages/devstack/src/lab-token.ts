/**
 * The admin API token `npm run up` gives the lab (console mode registers its pool, proxies and
 * directors over REST). Created once and reused: <data dir>/lab-token (mode 600) is kept while the
 * console still accepts it (GET /api/v1/me says admin); otherwise a new one is made by signing in
 * as the seeded admin (<data dir>/admin-credentials) and POST /api/v1/tokens with that session.
 * The token and the password are never printed.
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/** Name of the token in the console's Settings -> API tokens. */
export const LAB_TOKEN_NAME = "lab (npm run up)";
const REQUEST_TIMEOUT_MS = 15_000;
const SESSION_COOKIE = "tide_session";

export interface LabTokenOptions {
  consoleUrl: string;
  /** The dev stack's data directory (.tide): holds admin-credentials and receives lab-token. */
  dataDir: string;
  log?: (line: string) => void;
}

/** email=… / password=… lines as the seed writes them. */
export function parseAdminCredentials(text: string): { email: string; password: string } | null {
  const fields = new Map<string, string>();
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) fields.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  const email = fields.get("email");
  const password = fields.get("password");
  return email && password ? { email, password } : null;
}

/** The `tide_session` value from a response's Set-Cookie headers, or null. */
export function sessionFromSetCookie(setCookies: readonly string[]): string | null {
  for (const c of setCookies) {
    const m = new RegExp(`^\\s*${SESSION_COOKIE}=([^;]+)`).exec(c);
    if (m) return m[1]!;
  }
  return null;
}

/**
 * What GET /api/v1/me says of a token: "admin", "not-admin" (the console refused it, 401/403, or
 * it lacks the admin scope), or "unknown" (a busy or restarting console: 429, 5xx, anything else).
 * Only "not-admin" may lead to a new token; "unknown" is asked again (issue 34: a busy console's
 * 503 minted a new token on every restart).
 */
export function adminTokenVerdict(status: number, me: unknown): "admin" | "not-admin" | "unknown" {
  if (status === 401 || status === 403) return "not-admin";
  if (status !== 200) return "unknown";
  const scopes = (me as { scopes?: unknown } | null)?.scopes;
  return Array.isArray(scopes) && scopes.includes("admin") ? "admin" : "not-admin";
}

/** How long a busy console may keep answering "unknown" before ensureLabToken gives up (ms). */
const BUSY_CONSOLE_PATIENCE_MS = 300_000;
const BUSY_RETRY_MS = 2_000;

async function isAdminToken(
  consoleUrl: string,
  token: string,
  log: (line: string) => void,
): Promise<boolean> {
  const started = Date.now();
  let attempt = 0;
  for (;;) {
    let answer: string;
    try {
      const res = await fetch(`${consoleUrl}/api/v1/me`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      // A refusal's body is not read: cancel it, so the connection is not held for it.
      const me: unknown = res.status === 200 ? await res.json() : await res.body?.cancel().then(() => null);
      const verdict = adminTokenVerdict(res.status, me);
      if (verdict !== "unknown") return verdict === "admin";
      answer = `HTTP ${res.status}`;
    } catch (e) {
      answer = (e as Error).message;
    }
    if (Date.now() - started > BUSY_CONSOLE_PATIENCE_MS) {
      throw new Error(
        `GET ${consoleUrl}/api/v1/me did not say whether the lab's token is valid within ` +
          `${BUSY_CONSOLE_PATIENCE_MS / 1000} s (last: ${answer}); the token file is kept`,
      );
    }
    // Said once, then every 30 s while it lasts (a line every 2 s for 5 minutes would bury the log).
    if (attempt++ % 15 === 0) log(`the console is busy (GET /api/v1/me: ${answer}); asking again`);
    await new Promise((r) => setTimeout(r, BUSY_RETRY_MS));
  }
}

/** Returns the token file's path; creates or replaces the token when the console does not accept it. */
export async function ensureLabToken(o: LabTokenOptions): Promise<string> {
  const log = o.log ?? (() => {});
  const consoleUrl = o.consoleUrl.replace(/\/+$/, "");
  const file = path.join(o.dataDir, "lab-token");
  if (existsSync(file)) {
    const token = readFileSync(file, "utf8").trim();
    if (token !== "" && (await isAdminToken(consoleUrl, token, log))) {
      log(`reusing the lab's API token (${file})`);
      return file;
    }
    log(`${file} is not an admin token of this console (a new database?): creating a new one`);
  }
  const credentialsFile = path.join(o.dataDir, "admin-credentials");
  let credentials: { email: string; password: string } | null = null;
  try {
    credentials = parseAdminCredentials(readFileSync(credentialsFile, "utf8"));
  } catch {
    credentials = null;
  }
  if (!credentials) {
    throw new Error(
      `no admin credentials in ${credentialsFile} (the seed writes them when it creates the admin): ` +
        `create an admin API token in the console (Settings -> API tokens) and write it to ${file}`,
    );
  }
  const signIn = await fetch(`${consoleUrl}/api/auth/sign-in`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(credentials),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const session = sessionFromSetCookie(signIn.headers.getSetCookie());
  if (signIn.status !== 200 || session === null) {
    throw new Error(
      `signing in as ${credentials.email} failed (HTTP ${signIn.status}): the password in ${credentialsFile} ` +
        `may have been changed; create an admin API token in the console and write it to ${file}`,
    );
  }
  const created = await fetch(`${consoleUrl}/api/v1/tokens`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie: `${SESSION_COOKIE}=${session}` },
    body: JSON.stringify({ name: LAB_TOKEN_NAME, scopes: ["read", "operate", "admin"] }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  if (created.status !== 200) {
    throw new Error(`POST /api/v1/tokens as ${credentials.email}: HTTP ${created.status}`);
  }
  const { token } = (await created.json()) as { token?: unknown };
  if (typeof token !== "string" || !token.startsWith("tide_")) {
    throw new Error("POST /api/v1/tokens answered without a token");
  }
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  log(`created the API token "${LAB_TOKEN_NAME}" as ${credentials.email} (${file}, mode 600)`);
  return file;
}
