"use client";

import type { HostLiveUpdate, LiveNamespace } from "@tide/api";
import { useEffect, useState } from "react";
import { openLiveSource } from "~/features/live/live-source";

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
 * minutes on connect and the new samples after each ingest. It reconnects (EventSource itself, or
 * openLiveSource when the browser gives up); a reconnect gets a full update again. `onSamples` runs
 * on every update after the first.
 */
export function useHostLive(hostId: string, onSamples: () => void) {
  const [view, setView] = useState<HostLiveUpdate | null>(null);
  const [state, setState] = useState<LiveState>("connecting");
  const [heardAt, setHeardAt] = useState<string | null>(null);
  useEffect(() => {
    let first = true;
    return openLiveSource(`/api/live/hosts/${encodeURIComponent(hostId)}`, {
      onOpen: () => setState("live"),
      onError: () => setState("offline"),
      events: {
        heartbeat: () => setHeardAt(new Date().toISOString()),
        update: (e) => {
          const update = JSON.parse(e.data) as HostLiveUpdate;
          setState("live");
          setHeardAt(new Date().toISOString());
          setView((prev) => merge(prev, update));
          if (!first) onSamples();
          first = false;
        },
      },
    });
  }, [hostId, onSamples]);
  return { view, state, heardAt };
}
