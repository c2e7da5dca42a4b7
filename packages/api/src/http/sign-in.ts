import type { Db } from "@tide/db";
import { BlockList, isIP } from "node:net";
import { signIn, signOut } from "../auth/sessions";
import { getDb } from "../db";
import { apiEnv } from "../env";

/** The console's sign-in and sign-out route handlers (not tRPC procedures: they set the cookie). */

/**
 * The address of the socket a request came in on, set by `tide-console serve`
 * (apps/console/server/serve.ts) on every request, over anything the client sent. Next's route
 * handlers are not given the socket; Next itself only fills X-Forwarded-For from it when the
 * client sent none, so that header alone cannot tell a proxy's word from a client's.
 */
export const PEER_ADDRESS_HEADER = "x-tide-peer-address";

/** "203.0.113.5", "::ffff:203.0.113.5" (a v4 client on a dual-stack socket), "[2001:db8::1]:443" -> the bare address; null when it is none. */
export function bareAddress(raw: string | null | undefined): string | null {
  let a = (raw ?? "").trim();
  if (!a) return null;
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(a);
  if (bracketed) a = bracketed[1]!;
  else if (/^[\d.]+:\d+$/.test(a)) a = a.slice(0, a.lastIndexOf(":"));
  a = a.replace(/%.*$/, "").toLowerCase(); // an IPv6 zone (fe80::1%eth0) names our interface, not the client
  if (/^::ffff:\d+\.\d+\.\d+\.\d+$/.test(a)) a = a.slice(7);
  return isIP(a) ? a : null;
}

/** TIDE_TRUSTED_PROXIES entries ("127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8") as a BlockList. */
export function trustedProxyList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = "", prefix] = entry.split("/");
    const type = isIP(address) === 6 ? "ipv6" : "ipv4";
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return list;
}

function isTrusted(address: string, trusted: BlockList): boolean {
  return trusted.check(address, isIP(address) === 6 ? "ipv6" : "ipv4");
}

/**
 * The client's address for sign-in throttling, or null when unknown. The chain is
 * X-Forwarded-For followed by the immediate peer (PEER_ADDRESS_HEADER); read from the right, each
 * address that is a trusted proxy (TIDE_TRUSTED_PROXIES) vouches for the one before it, and the
 * first one that is not trusted is the client. So with no trusted proxies (the default) the
 * client is the peer, whatever X-Forwarded-For says; behind nginx on this host
 * (TIDE_TRUSTED_PROXIES=127.0.0.1,::1) it is the address nginx appended, and whatever the
 * client wrote to the left of it is ignored. An entry that is not an address ends the walk at
 * the proxy that passed it on: its clients share its one source rather than escaping the count.
 * Without `tide-console serve` (next start, next dev: development and e2e) there is no peer
 * header: the chain is X-Forwarded-For alone, whose last entry Next took from the socket only if
 * the client sent none, so there a client can still choose its source address.
 */
export function clientAddress(headers: Headers, trusted: BlockList): string | null {
  const chain = (headers.get("x-forwarded-for") ?? "")
    .split(",")
    .map((h) => h.trim())
    .filter(Boolean);
  const peer = headers.get(PEER_ADDRESS_HEADER);
  if (peer !== null) chain.push(peer);
  let vouching: string | null = null;
  for (let i = chain.length - 1; i >= 0; i--) {
    const address = bareAddress(chain[i]);
    if (address === null) return vouching;
    if (i === 0 || !isTrusted(address, trusted)) return address;
    vouching = address;
  }
  return null;
}

let trustedCache: { entries: readonly string[]; list: BlockList } | undefined;

function trustedProxies(): BlockList {
  const entries = apiEnv().TIDE_TRUSTED_PROXIES;
  if (trustedCache?.entries !== entries) trustedCache = { entries, list: trustedProxyList(entries) };
  return trustedCache.list;
}

/** Sign in; `headers` (the request's) give the source address for throttling. */
export async function handleSignIn(
  input: { email: string; password: string },
  headers: Headers = new Headers(),
  db: Db = getDb(),
) {
  return signIn(db, {
    ...input,
    source: clientAddress(headers, trustedProxies()),
    sessionHours: apiEnv().TIDE_SESSION_HOURS,
  });
}

export async function handleSignOut(cookieValue: string, db: Db = getDb()) {
  await signOut(db, cookieValue);
}
