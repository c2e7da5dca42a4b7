import { createServer, type Server } from "node:http";

/** Serve GET /metrics on host:port with the text `render` returns. */
export function serveMetrics(listen: string, render: () => string, log: (line: string) => void): Server {
  const colon = listen.lastIndexOf(":");
  const host = listen.slice(0, colon).replace(/^\[(.*)\]$/, "$1");
  const port = Number(listen.slice(colon + 1));
  const server = createServer((req, res) => {
    if (req.method === "GET" && (req.url === "/metrics" || req.url?.startsWith("/metrics?"))) {
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
      res.end(render());
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found: try /metrics\n");
  });
  server.on("error", (err) => log(`metrics server on ${listen}: ${err.message}`));
  server.listen(port, host, () => log(`metrics on http://${listen}/metrics`));
  return server;
}
