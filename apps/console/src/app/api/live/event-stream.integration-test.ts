import { createServer, type Server, type Socket } from "node:net";
import { createDb } from "@tide/db";
import { expect, it } from "vitest";
import { refuseUnlessReader } from "./event-stream";

/** Issue 26 item 6: a live stream's caller lookup that times out is 503 busy, not Next's empty 500. */
it("answers 503 busy with Retry-After when the database does not answer the caller's lookup", async () => {
  // A server that accepts connections and never says a word, like a frozen PostgreSQL.
  const sockets: Socket[] = [];
  const server: Server = createServer((s) => sockets.push(s));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  const frozen = createDb(`postgresql://tide@127.0.0.1:${port}/tide`, { max: 1, connectTimeoutMs: 300 });
  try {
    const req = new Request("http://localhost/api/live/pools/pool_1", {
      headers: { authorization: "Bearer tide_0123456789abcdef" },
    });
    const res = await refuseUnlessReader(frozen, req);
    expect(res?.status).toBe(503);
    expect(Number(res?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await res?.json()).toEqual({
      code: "busy",
      message: expect.stringMatching(/^The database is busy \(no database connection was free in time\)/),
    });
  } finally {
    for (const s of sockets) s.destroy();
    server.close();
    await frozen.$disconnect().catch(() => undefined);
  }
});
