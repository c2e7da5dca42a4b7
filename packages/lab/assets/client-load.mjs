// A light, endless client load through the lab's VIP, run as
//   ip netns exec <client ns> node client-load.mjs --host 10.200.0.10 --stream-port 9000 --http-port 80
// so a console shows live traffic: a few long-lived stream connections (each sends a small chunk
// every interval and reads its echo; reopened when closed) and a trickle of new HTTP connections.
// Prints one summary line every 10 s; SIGTERM closes everything and exits 0.
import http from "node:http";
import net from "node:net";
import { clearInterval, setInterval, setTimeout } from "node:timers";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    host: { type: "string", default: "10.200.0.10" },
    "stream-port": { type: "string", default: "9000" },
    "http-port": { type: "string", default: "80" },
    streams: { type: "string", default: "4" },
    "chunk-bytes": { type: "string", default: "256" },
    "stream-interval-ms": { type: "string", default: "500" },
    "http-per-second": { type: "string", default: "2" },
  },
});
const host = values.host;
const streamPort = Number(values["stream-port"]);
const httpPort = Number(values["http-port"]);
const streams = Number(values.streams);
const chunk = Buffer.alloc(Number(values["chunk-bytes"]), "tide-lab-load ");
const streamIntervalMs = Number(values["stream-interval-ms"]);
const httpIntervalMs = Math.round(1000 / Number(values["http-per-second"]));
/** Wait before reopening a stream that closed or failed, ms (the lab may be coming up). */
const REOPEN_DELAY_MS = 2_000;
/** Summary line interval, ms. */
const REPORT_INTERVAL_MS = 10_000;
const HTTP_TIMEOUT_MS = 5_000;

const stats = { streamsOpen: 0, streamsOpened: 0, streamErrors: 0, echoed: 0, httpOk: 0, httpFailed: 0 };
const byProxy = new Map();
const sockets = new Set();
let stopping = false;

function openStream() {
  if (stopping) return;
  const socket = net.createConnection({ host, port: streamPort });
  sockets.add(socket);
  let greeted = false;
  let timer = null;
  socket.setNoDelay(true);
  socket.on("data", (d) => {
    if (!greeted) {
      greeted = true;
      stats.streamsOpen++;
      stats.streamsOpened++;
      const proxy = d.toString().split("\n")[0];
      byProxy.set(proxy, (byProxy.get(proxy) ?? 0) + 1);
      timer = setInterval(() => socket.write(chunk), streamIntervalMs);
      return;
    }
    stats.echoed += d.length;
  });
  socket.on("error", () => stats.streamErrors++);
  socket.on("close", () => {
    sockets.delete(socket);
    if (timer !== null) clearInterval(timer);
    if (greeted) stats.streamsOpen--;
    if (!stopping) setTimeout(openStream, REOPEN_DELAY_MS);
  });
}

function httpGet() {
  const req = http.get({ host, port: httpPort, path: "/", agent: false, timeout: HTTP_TIMEOUT_MS }, (res) => {
    res.resume();
    res.on("end", () => (res.statusCode === 200 ? stats.httpOk++ : stats.httpFailed++));
  });
  req.on("timeout", () => req.destroy(new Error("timeout")));
  req.on("error", () => stats.httpFailed++);
}

for (let i = 0; i < streams; i++) openStream();
const httpTimer = setInterval(httpGet, httpIntervalMs);
const reportTimer = setInterval(() => {
  const proxies = [...byProxy].map(([p, n]) => `${p}:${n}`).join(" ");
  console.log(
    `${new Date().toISOString()} streams ${stats.streamsOpen}/${streams} (opened ${stats.streamsOpened}, ` +
      `errors ${stats.streamErrors}, echoed ${stats.echoed} B) http ok ${stats.httpOk} failed ${stats.httpFailed} ` +
      `streams by proxy ${proxies || "-"}`,
  );
}, REPORT_INTERVAL_MS);
console.log(
  `client load: ${streams} streams to ${host}:${streamPort}, ${1000 / httpIntervalMs} HTTP/s to :${httpPort}`,
);

process.on("SIGTERM", () => {
  stopping = true;
  clearInterval(httpTimer);
  clearInterval(reportTimer);
  for (const s of sockets) s.end();
  setTimeout(() => process.exit(0), 500).unref();
});
