// A light, endless client load through the lab's VIP, run as
//   ip netns exec <client ns> node client-load.mjs --host 10.200.0.10 --stream-port 9000 --http-port 80
// so a console shows live traffic: a few stream connections (each sends a small chunk every
// interval and reads its echo) and a trickle of new HTTP connections.
//
// Streams are recycled: each ends after a random lifetime in [L/2, L] (L = --stream-lifetime-s,
// default 30; the spread keeps them from all ending at once), closing gracefully (stop writing,
// let the echo catch up, FIN), and a new stream replaces it at once. So the offered load stays
// steady while every established connection ends within L (+ the close, well under a second on the
// lab): a drained proxy's count reaches zero within about L. --stream-lifetime-s 0 keeps streams
// open until they fail (a failed or refused stream is reopened after REOPEN_DELAY_MS).
// Prints one summary line every 10 s; SIGTERM closes everything and exits 0.
import http from "node:http";
import net from "node:net";
import { clearInterval, clearTimeout, setInterval, setTimeout } from "node:timers";
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
    "stream-lifetime-s": { type: "string", default: "30" },
  },
});
const host = values.host;
const streamPort = Number(values["stream-port"]);
const httpPort = Number(values["http-port"]);
const streams = Number(values.streams);
const chunk = Buffer.alloc(Number(values["chunk-bytes"]), "tide-lab-load ");
const streamIntervalMs = Number(values["stream-interval-ms"]);
const httpIntervalMs = Math.round(1000 / Number(values["http-per-second"]));
/** Longest life of one stream, ms (0: endless). */
const lifetimeMs = Number(values["stream-lifetime-s"]) * 1000;
if (!Number.isFinite(lifetimeMs) || lifetimeMs < 0) {
  console.error(`--stream-lifetime-s must be >= 0, got ${values["stream-lifetime-s"]}`);
  process.exit(2);
}
/** After its lifetime a stream stops writing; it is destroyed if its close takes longer, ms. */
const CLOSE_TIMEOUT_MS = 5_000;
/** Wait before reopening a stream that closed or failed, ms (the lab may be coming up). */
const REOPEN_DELAY_MS = 2_000;
/** Summary line interval, ms. */
const REPORT_INTERVAL_MS = 10_000;
const HTTP_TIMEOUT_MS = 5_000;

const stats = {
  streamsOpen: 0,
  streamsOpened: 0,
  streamsRecycled: 0,
  streamErrors: 0,
  echoed: 0,
  httpOk: 0,
  httpFailed: 0,
};
const byProxy = new Map();
const sockets = new Set();
let stopping = false;

/** A stream's lifetime, ms: uniform in [L/2, L]; Infinity when streams are not recycled. */
function streamLifetimeMs() {
  return lifetimeMs === 0 ? Infinity : lifetimeMs / 2 + Math.random() * (lifetimeMs / 2);
}

function openStream() {
  if (stopping) return;
  const socket = net.createConnection({ host, port: streamPort });
  sockets.add(socket);
  let greeted = false;
  let recycled = false;
  let timer = null;
  let sent = 0;
  let echoed = 0;
  const lifetime = streamLifetimeMs();
  // Counted from the connect call, so the whole connection lives at most L.
  const endTimer = Number.isFinite(lifetime) ? setTimeout(recycle, lifetime) : null;
  socket.setNoDelay(true);
  socket.on("data", (d) => {
    if (!greeted) {
      greeted = true;
      stats.streamsOpen++;
      stats.streamsOpened++;
      const proxy = d.toString().split("\n")[0];
      byProxy.set(proxy, (byProxy.get(proxy) ?? 0) + 1);
      timer = setInterval(() => {
        socket.write(chunk);
        sent += chunk.length;
      }, streamIntervalMs);
      return;
    }
    stats.echoed += d.length;
    echoed += d.length;
    if (recycled && echoed >= sent) socket.end();
  });
  socket.on("error", () => stats.streamErrors++);
  socket.on("close", () => {
    sockets.delete(socket);
    if (timer !== null) clearInterval(timer);
    if (endTimer !== null) clearTimeout(endTimer);
    if (greeted) stats.streamsOpen--;
    // A recycled stream is replaced at once (steady load); a failed one after a pause.
    if (!stopping) setTimeout(openStream, recycled ? 0 : REOPEN_DELAY_MS);
  });

  // Lifetime over: stop writing, end once the echo caught up (or now), never later than the timeout.
  function recycle() {
    recycled = true;
    stats.streamsRecycled++;
    if (timer !== null) clearInterval(timer);
    timer = null;
    if (!greeted || echoed >= sent) socket.end();
    setTimeout(() => socket.destroy(), CLOSE_TIMEOUT_MS).unref();
  }
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
      `recycled ${stats.streamsRecycled}, errors ${stats.streamErrors}, echoed ${stats.echoed} B) ` +
      `http ok ${stats.httpOk} failed ${stats.httpFailed} ` +
      `streams by proxy ${proxies || "-"}`,
  );
}, REPORT_INTERVAL_MS);
console.log(
  `client load: ${streams} streams to ${host}:${streamPort} ` +
    (lifetimeMs === 0 ? "(endless)" : `(each ends within ${lifetimeMs / 1000} s, then replaced)`) +
    `, ${1000 / httpIntervalMs} HTTP/s to :${httpPort}`,
);

process.on("SIGTERM", () => {
  stopping = true;
  clearInterval(httpTimer);
  clearInterval(reportTimer);
  for (const s of sockets) s.end();
  setTimeout(() => process.exit(0), 500).unref();
});
