import type { Db } from "@tide/db";
import type { Actor } from "../auth/actor";
import { resolveActor } from "../context";

/**
 * Who may keep reading a live stream (issue 27 item 3). A stream is opened with a session or an
 * API token holding the read scope and then stays open for hours; the rights that opened it can
 * end meanwhile (the token revoked or expired, the session signed out or expired, the user disabled
 * or demoted). So an open stream asks again, every LIVE_RECHECK_MS, with the same lookup a request
 * makes (resolveActor), and ends when the answer is no.
 *
 * Why on a timer and not on every push: a stream can be quiet for minutes (a pool page between
 * changes gets only heartbeats), and a check per push would let a revoked quiet stream stay open
 * until something happened; a busy host page pushes once a second, so a check per push would cost
 * a query a second per open page for nothing. A timer bounds both: a caller who lost the right sees
 * at most LIVE_RECHECK_MS (plus one lookup) of updates after it, and an open page costs one indexed
 * lookup every LIVE_RECHECK_MS.
 */

/** Time between an open stream's checks of its caller, ms: the bound on reading after a revoke. */
export const LIVE_RECHECK_MS = 5_000;

/**
 * Checks in a row that may fail (a database timeout: the caller could be neither confirmed nor
 * refused) before the stream ends anyway: one failure is a blip (the next check is LIVE_RECHECK_MS
 * later); two mean nobody can tell for 2 × LIVE_RECHECK_MS, and the stream ends (the browser
 * reconnects, and the reconnect is checked like any request).
 */
export const LIVE_RECHECK_FAILURES = 2;

/** Why a caller may not read live updates, as the stream's last event and the refusal say it. */
export interface LiveRefusal {
  status: 401 | 403 | 503;
  code: "unauthorized" | "forbidden" | "busy";
  message: string;
}

/** Why an open stream's caller is no longer anyone (resolveActor does not say which of these). */
const NO_LONGER_SIGNED_IN =
  "You are no longer signed in: the session ended or the API token was revoked or expired, or the user was disabled.";

/** Whether `actor` may read a live stream: null when it may, else why not. */
export function liveReaderRefusal(actor: Actor | null): LiveRefusal | null {
  if (!actor) {
    return {
      status: 401,
      code: "unauthorized",
      message: "Sign in first.",
    };
  }
  if (!actor.scopes.includes("read"))
    return { status: 403, code: "forbidden", message: "This needs the 'read' scope." };
  return null;
}

/**
 * Check the caller of an open stream (its request's headers: the session cookie or the bearer
 * token) every `intervalMs`, and call `end` once, with the reason, when it may no longer read.
 * Returns the function that stops checking (call it when the stream closes for any reason).
 */
export function watchLiveReader(
  db: Db,
  headers: Headers,
  end: (why: LiveRefusal) => void,
  opts: { intervalMs?: number } = {},
): () => void {
  const intervalMs = opts.intervalMs ?? LIVE_RECHECK_MS;
  // Copied: the request's headers must not be read after the response started (Next may reuse them).
  const caller = new Headers(headers);
  let stopped = false;
  let failures = 0;
  let timer: NodeJS.Timeout | null = null;
  const stop = () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    timer = null;
  };
  const check = async () => {
    timer = null;
    let refusal: LiveRefusal | null;
    try {
      refusal = liveReaderRefusal(await resolveActor(db, caller));
      if (refusal?.status === 401) refusal = { ...refusal, message: NO_LONGER_SIGNED_IN };
      failures = 0;
    } catch (e) {
      failures++;
      console.error(`live stream: could not check the caller (${failures} in a row)`, e);
      refusal =
        failures >= LIVE_RECHECK_FAILURES
          ? {
              status: 503,
              code: "busy",
              message: "The database did not answer whether you may still read; reconnect to try again.",
            }
          : null;
    }
    if (stopped) return;
    if (refusal) {
      stop();
      end(refusal);
      return;
    }
    schedule();
  };
  // One check at a time: the next is scheduled when this one has answered.
  const schedule = () => {
    timer = setTimeout(() => void check(), intervalMs);
    timer.unref();
  };
  schedule();
  return stop;
}
