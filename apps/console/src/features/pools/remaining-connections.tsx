"use client";

import type { ProxyTraffic } from "@tide/contracts";

/** "1,204 established, falling 38/s" / "0 established: every connection to the VIPs has ended". */
export function remainingText(t: ProxyTraffic | undefined): { text: string; drained: boolean | null } {
  if (!t || t.established === null)
    return {
      text: "established connections unknown (no live figures from this proxy's host)",
      drained: null,
    };
  if (t.established === 0)
    return { text: "0 established: every connection to the VIPs has ended", drained: true };
  const fall = t.establishedFallingPerS;
  const trend =
    fall === null
      ? ""
      : fall > 0
        ? `, falling ${fall.toFixed(fall < 10 ? 1 : 0)}/s`
        : fall < 0
          ? ", rising"
          : ", steady";
  return { text: `${t.established.toLocaleString("en-US")} established${trend}`, drained: false };
}

/** A draining proxy's remaining connections: what Deactivate would cut. */
export function RemainingConnections({ traffic }: { traffic: ProxyTraffic | undefined }) {
  const r = remainingText(traffic);
  return (
    <p className="muted" data-testid="remaining-connections" data-drained={String(r.drained)} role="status">
      {r.text}
    </p>
  );
}
