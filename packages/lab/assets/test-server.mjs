// A proxy's test server, run as `ip netns exec <proxy ns> node test-server.mjs --name prx1 ...`.
// Plain JavaScript so it starts in tens of milliseconds (no tsx).
//   HTTP   :80    GET / -> "<name>\n"; GET /bytes/N -> N bytes (PMTU tests); POST /sink -> byte
//                 count (throughput bench); every reply carries
//                 the header x-tide-proxy: <name>
//   stream :9000  sends "<name>\n" first, then echoes every byte it receives
// Prints "ready <name>" on stdout once both listen; SIGTERM closes both and exits 0.
import http from "node:http";
import net from "node:net";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    name: { type: "string" },
    host: { type: "string", default: "0.0.0.0" },
    "http-port": { type: "string", default: "80" },
    "stream-port": { type: "string", default: "9000" },
    backlog: { type: "string", default: "511" },
  },
});
const name = values.name ?? "proxy";
const backlog = Number(values.backlog);
/** Largest /bytes/N answered, bytes. */
const MAX_BYTES = 64 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, "tide-lab ");

const httpServer = http.createServer((req, res) => {
  res.setHeader("x-tide-proxy", name);
  const url = new URL(req.url ?? "/", "http://vip");
  const bytes = /^\/bytes\/(\d+)$/.exec(url.pathname);
  if (url.pathname === "/sink" && req.method === "POST") {
    // Uploads for the throughput bench: client -> directors -> proxy; answers the byte count.
    let got = 0;
    req.on("data", (chunk) => (got += chunk.length));
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(`${got}\n`);
    });
  } else if (url.pathname === "/") {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end(`${name}\n`);
  } else if (bytes && Number(bytes[1]) <= MAX_BYTES) {
    let left = Number(bytes[1]);
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(left) });
    const pump = () => {
      while (left > 0) {
        const n = Math.min(left, CHUNK.length);
        left -= n;
        if (!res.write(CHUNK.subarray(0, n))) return void res.once("drain", pump);
      }
      res.end();
    };
    pump();
  } else {
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found\n");
  }
});
httpServer.keepAliveTimeout = 5_000;

const streamServer = net.createServer((socket) => {
  socket.setNoDelay(true);
  socket.on("error", () => {});
  socket.write(`${name}\n`);
  socket.pipe(socket);
});

let listening = 0;
const onListening = () => {
  if (++listening === 2) console.log(`ready ${name}`);
};
httpServer.listen({ host: values.host, port: Number(values["http-port"]), backlog }, onListening);
streamServer.listen({ host: values.host, port: Number(values["stream-port"]), backlog }, onListening);
for (const server of [httpServer, streamServer]) {
  server.on("error", (err) => {
    console.error(`${name}: ${err.message}`);
    process.exit(1);
  });
}
process.on("SIGTERM", () => {
  console.log(`stopping ${name}`);
  process.exit(0);
});
