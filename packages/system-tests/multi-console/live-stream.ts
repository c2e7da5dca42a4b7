/**
 * A subscriber of a console's live host page stream (GET /api/live/hosts/{host}, Server-Sent
 * Events), as the host page's EventSource is: it keeps every event it received, and the test waits
 * for the one it expects.
 */
import { waitFor } from "@tide/devstack";

export interface LiveEvent {
  event: string;
  data: unknown;
}

export interface LiveStream {
  readonly events: LiveEvent[];
  /** Resolves with the first event (received so far or later) that `match` accepts. */
  until(what: string, match: (e: LiveEvent) => boolean, timeoutMs: number): Promise<LiveEvent>;
  close(): void;
}

/** Opens the stream with an API token (read scope); resolves once the console answered 200. */
export async function openLiveStream(
  consoleUrl: string,
  host: string,
  apiToken: string,
): Promise<LiveStream> {
  const abort = new AbortController();
  const res = await fetch(`${consoleUrl}/api/live/hosts/${encodeURIComponent(host)}`, {
    headers: { authorization: `Bearer ${apiToken}`, accept: "text/event-stream" },
    signal: abort.signal,
  });
  if (res.status !== 200 || res.body === null)
    throw new Error(`live stream of ${host} on ${consoleUrl}: HTTP ${res.status} ${await res.text()}`);
  const events: LiveEvent[] = [];
  let ended: string | null = null;
  void (async () => {
    const decoder = new TextDecoder();
    let text = "";
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = text.indexOf("\n\n")) >= 0) {
        const block = text.slice(0, end);
        text = text.slice(end + 2);
        let event = "message";
        let data = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("event: ")) event = line.slice(7);
          else if (line.startsWith("data: ")) data += line.slice(6);
        }
        events.push({ event, data: data === "" ? null : (JSON.parse(data) as unknown) });
      }
    }
    ended = "the console closed the stream";
  })().catch((e: unknown) => {
    ended = `the stream failed: ${String(e)}`;
  });
  return {
    events,
    until: (what, match, timeoutMs) =>
      waitFor(
        what,
        () => {
          const e = events.find(match);
          if (e === undefined && ended !== null) throw new Error(`${what}: ${ended}`);
          return e;
        },
        { timeoutMs, detail: () => `events received: ${events.map((e) => e.event).join(", ")}` },
      ) as Promise<LiveEvent>,
    close: () => abort.abort(),
  };
}
