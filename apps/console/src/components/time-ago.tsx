"use client";

import { useEffect, useState } from "react";

/** "2025-03-01 14:02:11Z": UTC, sortable, the same on every operator's screen. */
export function formatUtc(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}Z`;
}

export function formatAgo(iso: string, now: number): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s ago`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ago`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${m % 60}m ago`;
  return `${Math.floor(h / 24)}d ago`;
}

/** Relative time ("4m ago") that ticks; the UTC timestamp is the tooltip and the server rendering. */
export function TimeAgo({ iso }: { iso: string }) {
  const [now, setNow] = useState<number | null>(null);
  useEffect(() => {
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), 15_000);
    return () => clearInterval(timer);
  }, []);
  return (
    <time dateTime={iso} title={formatUtc(iso)}>
      {now === null ? formatUtc(iso) : formatAgo(iso, now)}
    </time>
  );
}

/** Absolute UTC time with the relative time as tooltip-free suffix: for logs, where order matters. */
export function UtcTime({ iso }: { iso: string }) {
  return (
    <time dateTime={iso} className="mono">
      {formatUtc(iso)}
    </time>
  );
}
