"use client";

import { FindingKind, FindingSeverity, FindingStatus } from "@tide/contracts";
import { useQuery } from "@tanstack/react-query";
import { usePathname, useRouter, useSearchParams } from "next/navigation";
import { useCallback, useRef, type KeyboardEvent } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { useTRPC } from "~/trpc/react";
import { FindingCard } from "./finding-card";
import styles from "./findings.module.css";

const statuses = FindingStatus.options;

function pick<T extends string>(options: readonly T[], value: string | null): T | undefined {
  return options.find((o) => o === value);
}

/** Findings by status (tabs) with host / kind / severity filters, all kept in the URL. */
export function FindingsView() {
  const trpc = useTRPC();
  const router = useRouter();
  const pathname = usePathname();
  const params = useSearchParams();
  const status = pick(statuses, params.get("status")) ?? "open";
  const host = params.get("host") ?? "";
  const kind = pick(FindingKind.options, params.get("kind"));
  const severity = pick(FindingSeverity.options, params.get("severity"));
  const tabRefs = useRef<(HTMLButtonElement | null)[]>([]);

  const setParam = useCallback(
    (name: string, value: string | undefined) => {
      const next = new URLSearchParams(params.toString());
      if (value) next.set(name, value);
      else next.delete(name);
      router.replace(`${pathname}?${next.toString()}`, { scroll: false });
    },
    [params, pathname, router],
  );

  const hosts = useQuery(trpc.hosts.list.queryOptions());
  const findings = useQuery(
    trpc.findings.list.queryOptions({
      status,
      hostId: host || undefined,
      kind,
      severity,
      limit: 200,
    }),
  );
  const hostName = new Map((hosts.data ?? []).map((h) => [h.id, h.name]));

  // Arrow keys move between tabs (WAI-ARIA tabs pattern).
  const onTabKey = (e: KeyboardEvent<HTMLButtonElement>, i: number) => {
    const delta = e.key === "ArrowRight" ? 1 : e.key === "ArrowLeft" ? -1 : 0;
    if (!delta) return;
    e.preventDefault();
    const j = (i + delta + statuses.length) % statuses.length;
    setParam("status", statuses[j]);
    tabRefs.current[j]?.focus();
  };

  return (
    <div className={styles.page}>
      <h1>Findings</h1>
      <div className={styles.tabs} role="tablist" aria-label="Finding status">
        {statuses.map((s, i) => (
          <button
            key={s}
            ref={(el) => {
              tabRefs.current[i] = el;
            }}
            type="button"
            role="tab"
            id={`tab-${s}`}
            aria-selected={s === status}
            aria-controls="findings-panel"
            tabIndex={s === status ? 0 : -1}
            className={styles.tab}
            data-testid={`tab-${s}`}
            onClick={() => setParam("status", s)}
            onKeyDown={(e) => onTabKey(e, i)}
          >
            {s}
          </button>
        ))}
      </div>
      <div className={styles.filters}>
        <label>
          Host
          <select value={host} onChange={(e) => setParam("host", e.target.value)} data-testid="filter-host">
            <option value="">all hosts</option>
            {(hosts.data ?? []).map((h) => (
              <option key={h.id} value={h.id}>
                {h.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Kind
          <select
            value={kind ?? ""}
            onChange={(e) => setParam("kind", e.target.value)}
            data-testid="filter-kind"
          >
            <option value="">all kinds</option>
            {FindingKind.options.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <label>
          Severity
          <select
            value={severity ?? ""}
            onChange={(e) => setParam("severity", e.target.value)}
            data-testid="filter-severity"
          >
            <option value="">any severity</option>
            {FindingSeverity.options.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      </div>
      <section id="findings-panel" role="tabpanel" aria-labelledby={`tab-${status}`}>
        {findings.error ? (
          <ErrorNotice error={findings.error} />
        ) : !findings.data ? (
          <p className="muted">Loading findings…</p>
        ) : findings.data.length === 0 ? (
          <p className="muted" data-testid="no-findings">
            No {status} findings{host || kind || severity ? " match these filters" : ""}.
          </p>
        ) : (
          <ul className={styles.list} data-testid="findings-list">
            {findings.data.map((f) => (
              <FindingCard key={f.id} finding={f} hostName={hostName.get(f.hostId)} />
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}
