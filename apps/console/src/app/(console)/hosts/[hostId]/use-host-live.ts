"use client";

import type { HostLiveUpdate, LiveNamespace } from "@tide/api";
import { useEffect, useState } from "react";

/** Points kept per namespace in the browser: five minutes of one-second samples. */
const MAX_POINTS = 300;

export type LiveState = "connecting" | "live" | "offline";

function merge(prev: HostLiveUpdate | null, next: HostLiveUpdate): HostLiveUpdate {
  if (!prev || next.full) return next;
  const namespaces: LiveNamespace[] = next.namespaces.map((ns) => {
    const old = prev.namespaces.find((n) => n.key === ns.key);
    return { ...ns, points: [...(old?.points ?? []), ...ns.points].slice(-MAX_POINTS) };
  });
  return { ...next, namespaces };
}

/**
 * The host's live view over one EventSource (/api/live/hosts/{id}): the server pushes the last five
 * minutes on connect and the new samples after each ingest. EventSource reconnects by itself; a
 * reconnect gets a full update again. `onSamples` runs on every update after the first.
 */
export function useHostLive(hostId: string, onSamples: () => void) {
  const [view, setView] = useState<HostLiveUpdate | null>(null);
  const [state, setState] = useState<LiveState>("connecting");
  const [heardAt, setHeardAt] = useState<string | null>(null);
  useEffect(() => {
    const source = new EventSource(`/api/live/hosts/${encodeURIComponent(hostId)}`);
    let first = true;
    source.addEventListener("open", () => setState("live"));
    source.addEventListener("error", () => setState("offline"));
    source.addEventListener("heartbeat", () => setHeardAt(new Date().toISOString()));
    source.addEventListener("update", (e: MessageEvent<string>) => {
      const update = JSON.parse(e.data) as HostLiveUpdate;
      setState("live");
      setHeardAt(new Date().toISOString());
      setView((prev) => merge(prev, update));
      if (!first) onSamples();
      first = false;
    });
    return () => source.close();
  }, [hostId, onSamples]);
  return { view, state, heardAt };
}
