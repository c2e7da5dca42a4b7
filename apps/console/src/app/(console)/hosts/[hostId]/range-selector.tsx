"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import styles from "../hosts.module.css";
import { fromUtcInput, hostHistoryHref, NAMED_RANGES, toUtcInput, type HistoryChoice } from "./history-range";

/**
 * Live (the default) or a range of the retained history: 15 min, 1 h, 24 h, 7 d, or custom from–to
 * (UTC). Each choice is a link, so it lands in the URL, the back button and a reload.
 */
export function RangeSelector({ hostId, choice }: { hostId: string; choice: HistoryChoice }) {
  const router = useRouter();
  const [customOpen, setCustomOpen] = useState(choice.mode === "custom");
  const [problem, setProblem] = useState<string | null>(null);
  const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
  const [from, setFrom] = useState(toUtcInput(choice.mode === "custom" ? choice.from : hourAgo));
  const [to, setTo] = useState(toUtcInput(choice.mode === "custom" ? choice.to : new Date().toISOString()));

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const f = fromUtcInput(from);
    const t = fromUtcInput(to);
    if (!f || !t) return setProblem("Give both times.");
    if (f >= t) return setProblem("From must be before to.");
    setProblem(null);
    router.push(hostHistoryHref(hostId, { mode: "custom", from: f, to: t }), { scroll: false });
  };

  const item = (key: string, label: string, active: boolean, href: string) => (
    <Link
      key={key}
      href={href}
      scroll={false}
      className={`${styles.rangeLink} ${active ? styles.rangeActive : ""}`}
      aria-current={active ? "page" : undefined}
      data-testid={`range-${key}`}
    >
      {label}
    </Link>
  );

  return (
    <div className={styles.rangeBar}>
      <nav aria-label="Time range" className={styles.rangeLinks} data-testid="range-selector">
        {item("live", "Live", choice.mode === "live", hostHistoryHref(hostId, { mode: "live" }))}
        {NAMED_RANGES.map((r) =>
          item(
            r.range,
            r.label,
            choice.mode === "range" && choice.range === r.range,
            hostHistoryHref(hostId, { mode: "range", range: r.range }),
          ),
        )}
        <button
          type="button"
          className={`${styles.rangeLink} ${choice.mode === "custom" ? styles.rangeActive : ""}`}
          aria-expanded={customOpen}
          aria-controls="custom-range"
          data-testid="range-custom"
          onClick={() => setCustomOpen((o) => !o)}
        >
          Custom
        </button>
      </nav>
      {customOpen && (
        <form id="custom-range" className={styles.customRange} onSubmit={submit} data-testid="custom-range">
          <label>
            From (UTC){" "}
            <input
              type="datetime-local"
              value={from}
              onChange={(e) => setFrom(e.target.value)}
              data-testid="custom-from"
              required
            />
          </label>
          <label>
            To (UTC){" "}
            <input
              type="datetime-local"
              value={to}
              onChange={(e) => setTo(e.target.value)}
              data-testid="custom-to"
              required
            />
          </label>
          <button type="submit" className="small primary" data-testid="custom-show">
            Show
          </button>
          {problem && (
            <span role="alert" className={styles.stale}>
              {problem}
            </span>
          )}
        </form>
      )}
    </div>
  );
}
