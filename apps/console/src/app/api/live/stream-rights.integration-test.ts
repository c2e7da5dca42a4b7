import {
  appRouter,
  createCallerFactory,
  getDb,
  handleSignIn,
  hashPassword,
  LIVE_RECHECK_MS,
  type Actor,
} from "@tide/api";
import { newId } from "@tide/contracts";
import { afterAll, describe, expect, it } from "vitest";
import { GET as hostStream } from "./hosts/[hostId]/route";
import { GET as poolStream } from "./pools/[poolId]/route";

/**
 * Issue 27 item 3: a live stream ends with the rights that opened it. After its API token was
 * revoked a host stream kept delivering, and a disabled user's pool stream kept getting events.
 * The routes run as Next runs them (getDb: this run's database, from DATABASE_URL); each test
 * names its own users, pools and hosts.
 */

const db = getDb();
const createCaller = createCallerFactory(appRouter);
const PASSWORD = "violet-kettle-harbour";

/** How long a stream may stay open after its rights ended: one re-check, plus its lookup and slack. */
const BOUND_MS = LIVE_RECHECK_MS + 2_000;

afterAll(async () => {
  await db.$disconnect();
});

async function makeUser(role: "viewer" | "admin"): Promise<Actor> {
  const id = newId("user");
  const email = `${role}-${id.slice(-8)}@live.test`;
  await db.user.create({ data: { id, email, name: role, role, passwordHash: await hashPassword(PASSWORD) } });
  const scopes = role === "admin" ? (["read", "operate", "admin"] as const) : (["read"] as const);
  return {
    kind: "user",
    userId: id,
    email,
    name: role,
    role,
    tokenId: null,
    label: email,
    scopes: [...scopes],
  };
}

/** An open SSE response, read as text events until it ends. */
function reading(res: Response) {
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: { event: string; data: unknown }[] = [];
  let ended: number | null = null;
  let buffer = "";
  const done = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1] ?? "message";
        const data = /^data: (.*)$/m.exec(block)?.[1];
        events.push({ event, data: data === undefined ? null : JSON.parse(data) });
      }
    }
    ended = Date.now();
  })();
  return {
    events,
    endedAt: () => ended,
    /** Resolves true when the stream ends within `ms`, false when it is still open then. */
    endsWithin: (ms: number) =>
      Promise.race([done.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]),
    stop: () => reader.cancel().catch(() => undefined),
  };
}

const request = (path: string, headers: Record<string, string>) =>
  new Request(`http://localhost${path}`, { headers: new Headers(headers) });

describe("live streams end with the rights that opened them", () => {
  it("a host stream ends within the bound after its API token is revoked; another token's stays open", async () => {
    const admin = await makeUser("admin");
    const api = createCaller({ db, actor: admin });
    const revoked = await api.tokens.create({ name: "live-revoked", scopes: ["read"] });
    const kept = await api.tokens.create({ name: "live-kept", scopes: ["read"] });
    const host = await db.host.create({
      data: { id: newId("host"), name: `live-${newId("host").slice(-8)}` },
    });
    const open = (token: string) =>
      hostStream(request(`/api/live/hosts/${host.id}`, { authorization: `Bearer ${token}` }), {
        params: Promise.resolve({ hostId: host.id }),
      });
    const a = reading(await open(revoked.token));
    const b = reading(await open(kept.token));
    try {
      await api.tokens.revoke({ tokenId: revoked.summary.id });
      const revokedAt = Date.now();
      expect(await a.endsWithin(BOUND_MS)).toBe(true);
      console.log(`host stream ended ${a.endedAt()! - revokedAt} ms after the revoke (bound ${BOUND_MS} ms)`);
      expect(a.events[0]?.event).toBe("update");
      expect(a.events.at(-1)).toEqual({
        event: "end",
        data: { code: "unauthorized", message: expect.stringMatching(/no longer signed in/) },
      });
      // The token that was not revoked reads on (the stream did not end for another reason).
      expect(await b.endsWithin(LIVE_RECHECK_MS)).toBe(false);
      // Reconnecting with the revoked token is refused.
      expect((await open(revoked.token)).status).toBe(401);
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it("a pool stream ends within the bound after its user is disabled; a viewer's session stays", async () => {
    const admin = await makeUser("admin");
    const viewer = await makeUser("viewer");
    const other = await makeUser("viewer");
    const api = createCaller({ db, actor: admin });
    const pool = await api.pools.create({
      name: `live-${newId("pool").slice(-8)}`,
      binds: [{ address: "203.0.113.40", proto: "tcp", portStart: 443 }],
    });
    const open = async (email: string) => {
      const session = await handleSignIn({ email, password: PASSWORD }, new Headers(), db);
      return poolStream(
        request(`/api/live/pools/${pool.id}`, { cookie: `tide_session=${session.cookieValue}` }),
        {
          params: Promise.resolve({ poolId: pool.id }),
        },
      );
    };
    const a = reading(await open(viewer.email));
    const b = reading(await open(other.email));
    try {
      await api.users.disable({ userId: viewer.userId });
      const disabledAt = Date.now();
      expect(await a.endsWithin(BOUND_MS)).toBe(true);
      console.log(
        `pool stream ended ${a.endedAt()! - disabledAt} ms after the disable (bound ${BOUND_MS} ms)`,
      );
      expect(a.events[0]).toEqual({ event: "hello", data: { poolId: pool.id } });
      expect(a.events.at(-1)?.event).toBe("end");
      expect(await b.endsWithin(LIVE_RECHECK_MS)).toBe(false);
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  it("a session's stream ends within the bound after the session is signed out", async () => {
    const viewer = await makeUser("viewer");
    const pool = await createCaller({ db, actor: await makeUser("admin") }).pools.create({
      name: `live-${newId("pool").slice(-8)}`,
      binds: [{ address: "203.0.113.41", proto: "tcp", portStart: 443 }],
    });
    const session = await handleSignIn({ email: viewer.email, password: PASSWORD }, new Headers(), db);
    const a = reading(
      await poolStream(
        request(`/api/live/pools/${pool.id}`, { cookie: `tide_session=${session.cookieValue}` }),
        {
          params: Promise.resolve({ poolId: pool.id }),
        },
      ),
    );
    try {
      await db.session.deleteMany({ where: { userId: viewer.userId } }); // what sign-out does
      expect(await a.endsWithin(BOUND_MS)).toBe(true);
      expect(a.events.at(-1)?.event).toBe("end");
    } finally {
      await a.stop();
    }
  });
});
