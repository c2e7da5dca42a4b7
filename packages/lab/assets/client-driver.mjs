// The lab's client driver, run as `ip netns exec <client ns> node client-driver.mjs`; it exits when
// its stdin closes. Requests on stdin and replies on stdout, one JSON object per line:
//   {"id":1,"cmd":"open","host":"10.200.0.10","port":9000,"count":20,"chunkBytes":1024,"intervalMs":50}
//   {"id":2,"cmd":"report"}            {"id":3,"cmd":"close","ids":[1,2]}   {"id":4,"cmd":"destroy"}
//   {"id":5,"cmd":"http","url":"http://10.200.0.10/bytes/5000","timeoutMs":5000}
// -> {"id":1,"ok":true,"result":{...}} or {"id":1,"ok":false,"error":"..."}
// A connection reads the server's "<proxy>\n" line, then sends chunkBytes every intervalMs and checks
// that every echoed byte equals the byte it sent at that offset (a per-connection pattern).
import http from "node:http";
import net from "node:net";
import readline from "node:readline";
import { clearInterval, clearTimeout, setInterval, setTimeout } from "node:timers";

/** Stop sending while this many bytes are unechoed (bytes): a stalled path must not fill memory. */
const MAX_IN_FLIGHT = 256 * 1024;
const connections = new Map();
let nextConnection = 1;

/** Byte at offset k of connection c's stream. */
const patternByte = (c, k) => (k * 7 + c * 13 + (k >>> 8)) & 0xff;

function makeChunk(c, offset, length) {
  const b = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) b[i] = patternByte(c, offset + i);
  return b;
}

function report(conn) {
  return {
    id: conn.id,
    localPort: conn.localPort,
    proxy: conn.proxy,
    sent: conn.sent,
    echoed: conn.echoed,
    state: conn.state,
    error: conn.error,
    openedMs: conn.openedAt === null ? null : conn.openedAt - conn.startedAt,
    lastEchoAgoMs: conn.lastEchoAt === null ? null : Date.now() - conn.lastEchoAt,
  };
}

function fail(conn, code) {
  if (conn.state === "closed" || conn.state === "error") return;
  conn.state = "error";
  conn.error = code;
  clearInterval(conn.timer);
  conn.socket.destroy();
  for (const w of conn.waiters.splice(0)) w();
}

function settle(conn) {
  for (const w of conn.waiters.splice(0)) w();
}

function openConnection(options) {
  const id = nextConnection++;
  const socket = net.createConnection({ host: options.host, port: options.port });
  const conn = {
    id,
    socket,
    localPort: null,
    proxy: null,
    sent: 0,
    echoed: 0,
    state: "connecting",
    error: null,
    startedAt: Date.now(),
    openedAt: null,
    lastEchoAt: null,
    timer: null,
    waiters: [],
    header: Buffer.alloc(0),
    sending: true,
  };
  connections.set(id, conn);
  socket.setNoDelay(true);
  const connectTimer = setTimeout(() => {
    if (conn.state === "connecting") fail(conn, conn.localPort === null ? "ETIMEDOUT" : "NO_GREETING");
  }, options.connectTimeoutMs);
  socket.on("connect", () => {
    conn.localPort = socket.localPort ?? null;
    conn.timer = setInterval(() => {
      if (!conn.sending || conn.state !== "open") return;
      if (conn.sent - conn.echoed > MAX_IN_FLIGHT) return;
      socket.write(makeChunk(id, conn.sent, options.chunkBytes));
      conn.sent += options.chunkBytes;
    }, options.intervalMs);
  });
  socket.on("data", (data) => {
    if (conn.proxy === null) {
      conn.header = Buffer.concat([conn.header, data]);
      const nl = conn.header.indexOf(10);
      if (nl < 0) return;
      conn.proxy = conn.header.subarray(0, nl).toString("utf8");
      data = conn.header.subarray(nl + 1);
      conn.header = Buffer.alloc(0);
      conn.state = "open";
      conn.openedAt = Date.now();
      clearTimeout(connectTimer);
      settle(conn);
    }
    for (let i = 0; i < data.length; i++) {
      if (data[i] !== patternByte(id, conn.echoed + i)) {
        conn.echoed += i;
        return fail(conn, `ECHO_MISMATCH at byte ${conn.echoed}`);
      }
    }
    if (conn.echoed + data.length > conn.sent) return fail(conn, "ECHO_TOO_LONG");
    conn.echoed += data.length;
    if (data.length > 0) conn.lastEchoAt = Date.now();
    settle(conn);
  });
  socket.on("error", (err) => fail(conn, err.code ?? err.message));
  socket.on("end", () => {
    if (conn.state !== "closing") fail(conn, "PEER_CLOSED");
  });
  socket.on("close", () => {
    clearTimeout(connectTimer);
    clearInterval(conn.timer);
    if (conn.state === "closing") conn.state = "closed";
    else if (conn.state !== "error") fail(conn, "CLOSED");
    settle(conn);
  });
  return conn;
}

/** Resolves when pred(conn) holds or the connection changes state for good, or at the deadline. */
function waitFor(conn, pred, deadline) {
  return new Promise((resolve) => {
    const check = () => {
      if (pred(conn) || conn.state === "error" || conn.state === "closed" || Date.now() >= deadline) {
        clearTimeout(timer);
        return resolve();
      }
      conn.waiters.push(check);
    };
    const timer = setTimeout(
      () => {
        const i = conn.waiters.indexOf(check);
        if (i >= 0) conn.waiters.splice(i, 1);
        resolve();
      },
      Math.max(0, deadline - Date.now()),
    );
    check();
  });
}

function selected(ids) {
  if (!ids) return [...connections.values()];
  return ids.map((id) => {
    const c = connections.get(id);
    if (!c) throw new Error(`no connection ${id}`);
    return c;
  });
}

async function open(req) {
  const options = {
    host: req.host,
    port: req.port,
    chunkBytes: req.chunkBytes ?? 1024,
    intervalMs: req.intervalMs ?? 50,
    connectTimeoutMs: req.connectTimeoutMs ?? 5_000,
  };
  const opened = [];
  for (let i = 0; i < (req.count ?? 1); i++) opened.push(openConnection(options));
  const deadline = Date.now() + options.connectTimeoutMs + 1_000;
  await Promise.all(opened.map((c) => waitFor(c, (x) => x.state !== "connecting", deadline)));
  return { connections: opened.map(report) };
}

async function close(req) {
  const list = selected(req.ids);
  const deadline = Date.now() + (req.timeoutMs ?? 10_000);
  for (const c of list) c.sending = false;
  // Graceful, each connection on its own: everything sent has come back, then FIN, then the
  // server's FIN. A stalled connection does not hold up the others.
  await Promise.all(
    list.map(async (c) => {
      await waitFor(c, (x) => x.echoed >= x.sent, deadline);
      if (c.state !== "open" && c.state !== "connecting") return;
      if (c.echoed < c.sent) return fail(c, "ECHO_INCOMPLETE");
      c.state = "closing";
      clearInterval(c.timer);
      c.socket.end();
      await waitFor(c, (x) => x.state === "closed", deadline);
      if (c.state === "closing") fail(c, "CLOSE_TIMEOUT");
    }),
  );
  const result = { connections: list.map(report) };
  if (req.forget !== false) for (const c of list) connections.delete(c.id);
  return result;
}

function destroy(req) {
  const list = selected(req.ids);
  for (const c of list) fail(c, "DESTROYED");
  for (const c of list) connections.delete(c.id);
  return { connections: list.map(report) };
}

function fetchUrl(req) {
  const timeoutMs = req.timeoutMs ?? 5_000;
  const started = Date.now();
  return new Promise((resolve) => {
    const done = (r) => resolve({ url: req.url, ms: Date.now() - started, ...r });
    const request = http.get(
      req.url,
      { agent: false, signal: globalThis.AbortSignal.timeout(timeoutMs) },
      (res) => {
        let bytes = 0;
        const head = [];
        res.on("data", (chunk) => {
          if (bytes < 4096) head.push(chunk);
          bytes += chunk.length;
        });
        res.on("end", () => {
          const body = Buffer.concat(head).subarray(0, 4096).toString("utf8");
          const header = res.headers["x-tide-proxy"];
          done({
            status: res.statusCode ?? 0,
            bytes,
            proxy: typeof header === "string" ? header : null,
            body: bytes <= 4096 ? body : null,
            error: res.complete ? null : "INCOMPLETE",
          });
        });
        res.on("error", (err) =>
          done({
            status: res.statusCode ?? 0,
            bytes,
            proxy: null,
            body: null,
            error: err.code ?? err.message,
          }),
        );
      },
    );
    request.on("error", (err) =>
      done({
        status: 0,
        bytes: 0,
        proxy: null,
        body: null,
        error:
          err.name === "AbortError" || err.name === "TimeoutError" ? "TIMEOUT" : (err.code ?? err.message),
      }),
    );
  });
}

async function handle(req) {
  switch (req.cmd) {
    case "open":
      return open(req);
    case "report":
      return { connections: selected(req.ids).map(report) };
    case "close":
      return close(req);
    case "destroy":
      return destroy(req);
    case "http":
      return fetchUrl(req);
    case "ping":
      return { pid: process.pid };
    default:
      throw new Error(`unknown command ${JSON.stringify(req.cmd)}`);
  }
}

const write = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
const input = readline.createInterface({ input: process.stdin });
input.on("line", (line) => {
  if (line.trim() === "") return;
  let req;
  try {
    req = JSON.parse(line);
  } catch {
    return write({ id: null, ok: false, error: "request is not JSON" });
  }
  handle(req).then(
    (result) => write({ id: req.id ?? null, ok: true, result }),
    (err) => write({ id: req.id ?? null, ok: false, error: err.message }),
  );
});
input.on("close", () => {
  for (const c of connections.values()) c.socket.destroy();
  process.exit(0);
});
write({ id: null, ok: true, result: { ready: true, pid: process.pid } });
