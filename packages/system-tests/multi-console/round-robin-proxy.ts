/**
 * A simple round-robin HTTP load balancer on loopback, in front of several console processes (issue
 * 16: more than one console). Each request goes to the next console in turn, on a new connection
 * (no pooled socket that a killed console would leave half dead). A console that refuses the
 * connection is skipped for that request, the way nginx's `proxy_next_upstream error` does: the
 * request never reached it, so sending it to the next one cannot store anything twice. Any other
 * failure (the console died while it held the request) answers 502: only the agent knows whether to
 * send that batch again. Responses are streamed through, so long polls and event streams work.
 */
import { request, createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RoundRobinProxy {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** Per console (its base URL): requests it answered, and connections it refused. */
  readonly answered: Map<string, number>;
  readonly refused: Map<string, number>;
  close(): Promise<void>;
}

const count = (m: Map<string, number>, key: string) => m.set(key, (m.get(key) ?? 0) + 1);

export async function startRoundRobinProxy(consoleUrls: readonly string[]): Promise<RoundRobinProxy> {
  if (consoleUrls.length === 0) throw new Error("round-robin proxy: no console");
  const answered = new Map<string, number>();
  const refused = new Map<string, number>();
  let next = 0;

  /** Sends the request to consoles in turn from the next one, until one takes the connection. */
  const forward = (req: IncomingMessage, body: Buffer, res: ServerResponse, tried: number): void => {
    const target = consoleUrls[next++ % consoleUrls.length]!;
    const u = new URL(req.url ?? "/", target);
    const upstream = request(u, {
      method: req.method,
      headers: { ...req.headers, host: u.host, connection: "close" },
      agent: false,
    });
    upstream.on("response", (r) => {
      count(answered, target);
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
      r.on("error", () => res.destroy());
    });
    upstream.on("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "ECONNREFUSED") {
        count(refused, target);
        if (tried + 1 < consoleUrls.length) return forward(req, body, res, tried + 1);
      }
      if (res.headersSent) res.destroy();
      else res.writeHead(502, { "content-type": "text/plain" }).end(`proxy: ${target}: ${e.message}`);
    });
    // The client went away (an aborted long poll, a closed event stream): so does the upstream call.
    res.on("close", () => upstream.destroy());
    upstream.end(body);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => forward(req, Buffer.concat(chunks), res, 0));
    req.on("error", () => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    answered,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
