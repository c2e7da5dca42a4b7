import { connect } from "node:net";

/** How long one control exchange may take, in ms. */
export const CONTROL_TIMEOUT_MS = 2_000;

/**
 * Send request objects over a newline-JSON UNIX socket (tide-director / tide-redirect control
 * protocol) and collect one reply line per request, in order. Rejects on connect errors, timeouts
 * and early close; never throws synchronously.
 */
export function controlExchange(
  socketPath: string,
  requests: readonly object[],
  timeoutMs = CONTROL_TIMEOUT_MS,
): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const replies: unknown[] = [];
    let buffer = "";
    let done = false;
    const sock = connect({ path: socketPath });
    const finish = (err: Error | null): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      if (err !== null) reject(err);
      else resolve(replies);
    };
    const timer = setTimeout(() => finish(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
    sock.setEncoding("utf8");
    sock.on("connect", () => sock.write(requests.map((r) => JSON.stringify(r) + "\n").join("")));
    sock.on("data", (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        try {
          replies.push(JSON.parse(line));
        } catch {
          finish(new Error("bad reply: not JSON"));
          return;
        }
        if (replies.length === requests.length) finish(null);
      }
    });
    sock.on("error", (err) => finish(err));
    sock.on("close", () => finish(new Error("connection closed before every reply")));
  });
}
