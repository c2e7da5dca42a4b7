/**
 * `tide-console serve`: the production console. Next's documented custom-server API
 * (`next({ dev: false, dir })` + getRequestHandler) on our own node:http or node:https server,
 * rather than the standalone output's generated server.js, which only speaks HTTP and has no
 * place for certificate reloads, HSTS or systemd readiness. It runs on the standalone output all
 * the same: the build's config comes from required-server-files.json (as server.js does it), so
 * the release tree needs neither next.config.ts nor Next's compiler.
 *
 * HTTPS when TIDE_TLS_CERT_FILE and TIDE_TLS_KEY_FILE are set: the console is then the edge, so
 * X-Forwarded-* from clients are dropped (Next sets them from the TLS socket: proto https, the
 * peer's address) and every response carries HSTS. Plain HTTP is for a reverse proxy on this host
 * (the default address is 127.0.0.1), whose X-Forwarded-* the console trusts
 * (deploy/nginx-tide-console.conf).
 */
import http from "node:http";
import https from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import { answerDirectly } from "./api-direct";
import { ConfigError, serverEnv, setProductionMode, setStandaloneConfig } from "./env";
import { buildConfig, consoleLayout } from "./layout";
import { notifyReady } from "./systemd";
import { readTlsFiles, type TlsFiles } from "./tls";

/** HSTS max-age, s: one year, the value preload lists ask for; no includeSubDomains (other hosts of the domain are not ours). */
export const HSTS_MAX_AGE_S = 31_536_000;
/** After SIGTERM, how long requests in flight (live pages' event streams) may run on, ms; systemd waits 90 s. */
export const SHUTDOWN_GRACE_MS = 10_000;

/** Headers a client could use to pass as another address, host or scheme when nothing sits in front. */
const EDGE_DROPPED_HEADERS = [
  "x-forwarded-for",
  "x-forwarded-host",
  "x-forwarded-proto",
  "x-forwarded-port",
  "x-real-ip",
  "forwarded",
];

/** = PEER_ADDRESS_HEADER in @tide/api (this command's bundle does not load the API). */
const PEER_ADDRESS_HEADER = "x-tide-peer-address";

type RequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

interface NextApp {
  prepare(): Promise<void>;
  getRequestHandler(): RequestHandler;
  close?(): Promise<void>;
}
type CreateNext = (options: {
  dev: boolean;
  dir: string;
  hostname: string;
  port: number;
  conf: unknown;
}) => NextApp;

export async function serve(): Promise<void> {
  const env = serverEnv();
  const { appDir } = consoleLayout();
  const tlsFiles: TlsFiles | null =
    env.TIDE_TLS_CERT_FILE && env.TIDE_TLS_KEY_FILE
      ? { certFile: env.TIDE_TLS_CERT_FILE, keyFile: env.TIDE_TLS_KEY_FILE }
      : null;
  const credentials = tlsFiles ? readTlsFiles(tlsFiles) : null;
  // The console's own checks (apps/console/src/env.ts) run when Next loads instrumentation; this
  // one fails first, with the exit status that tells systemd not to restart.
  if (!env.DATABASE_URL) throw new ConfigError("DATABASE_URL is not set (see /etc/tide/console.env)");

  const conf = buildConfig(appDir);
  setProductionMode();
  setStandaloneConfig(conf);
  // As the standalone server.js does: relative paths in Next's runtime resolve from the app.
  process.chdir(appDir);

  const scheme = tlsFiles ? "https" : "http";
  // Imported when serving only (migrate and create-admin never load Next), through a variable so
  // that Next's global types (a required NODE_ENV) stay out of this command's type check.
  const nextPackage = "next";
  const { default: createNext } = (await import(nextPackage)) as { default: CreateNext };
  const app = createNext({ dev: false, dir: appDir, hostname: env.TIDE_CONSOLE_HOST, port: env.PORT, conf });

  let handle: RequestHandler | null = null;
  const edge = {
    scheme: scheme as "http" | "https",
    host: `${env.TIDE_CONSOLE_HOST.includes(":") ? `[${env.TIDE_CONSOLE_HOST}]` : env.TIDE_CONSOLE_HOST}:${env.PORT}`,
    tls: tlsFiles !== null,
  };
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    // The socket's peer, for sign-in throttling (PEER_ADDRESS_HEADER in @tide/api http/sign-in.ts,
    // which believes X-Forwarded-For only from TIDE_TRUSTED_PROXIES): Next gives route handlers no
    // socket. Always set here, over anything a client sent under that name.
    delete req.headers[PEER_ADDRESS_HEADER];
    if (req.socket.remoteAddress) req.headers[PEER_ADDRESS_HEADER] = req.socket.remoteAddress;
    if (tlsFiles) {
      for (const header of EDGE_DROPPED_HEADERS) delete req.headers[header];
      res.setHeader("strict-transport-security", `max-age=${HSTS_MAX_AGE_S}`);
    }
    if (!handle) {
      res.writeHead(503, { "retry-after": "1" }).end();
      return;
    }
    if (answerDirectly(req, res, edge)) return;
    handle(req, res).catch((e: unknown) => {
      console.error("tide-console: request failed:", e);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  };
  const server = credentials ? https.createServer(credentials, onRequest) : http.createServer(onRequest);

  // Before anything can take a request: the long polls of agents are answered at once on a
  // signal only when a handler was installed first (packages/api desired-state.service.ts).
  installShutdown(server, app);
  process.on("SIGHUP", () => {
    if (!tlsFiles || !(server instanceof https.Server)) {
      console.log("tide-console: SIGHUP: nothing to reload (no TLS files)");
      return;
    }
    try {
      server.setSecureContext(readTlsFiles(tlsFiles));
      console.log(`tide-console: SIGHUP: reloaded ${tlsFiles.certFile} and ${tlsFiles.keyFile}`);
    } catch (e) {
      console.error(`tide-console: SIGHUP: kept the old certificate: ${(e as Error).message}`);
    }
  });

  await app.prepare();
  handle = app.getRequestHandler();
  await listen(server, env.PORT, env.TIDE_CONSOLE_HOST);
  const where = `${scheme}://${env.TIDE_CONSOLE_HOST.includes(":") ? `[${env.TIDE_CONSOLE_HOST}]` : env.TIDE_CONSOLE_HOST}:${env.PORT}`;
  console.log(`tide-console: serving ${appDir} on ${where}`);
  await notifyReady(env.NOTIFY_SOCKET, `serving on ${where}`);
}

function listen(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", (e: NodeJS.ErrnoException) => {
      // A port below 1024 without CAP_NET_BIND_SERVICE, or an address this host does not have,
      // will not fix itself; a port still held by a stopping process may (exit 1: restart).
      if (e.code === "EACCES" || e.code === "EADDRNOTAVAIL") {
        reject(new ConfigError(`cannot listen on ${host}:${port}: ${e.message}`));
      } else reject(e);
    });
    server.listen(port, host, () => resolve());
  });
}

function installShutdown(server: http.Server, app: NextApp): void {
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    console.log(
      `tide-console: ${signal}: closing (at most ${SHUTDOWN_GRACE_MS / 1000} s for requests in flight)`,
    );
    const force = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    force.unref();
    server.close(() => {
      clearTimeout(force);
      void (app.close?.() ?? Promise.resolve())
        .catch((e: unknown) => console.error("tide-console: closing Next:", e))
        // 0, not 128+signal: a requested stop is a clean one for systemd.
        .finally(() => process.exit(0));
    });
    server.closeIdleConnections();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
