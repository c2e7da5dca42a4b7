"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { ErrorNotice } from "~/components/error-notice";
import { AddHostButton } from "~/features/hosts/add-host-button";
import { EnrollmentTokensPanel } from "~/features/hosts/enrollment-tokens-panel";
import { TimeAgo } from "~/components/time-ago";
import { useTRPC } from "~/trpc/react";
import { SeverityBadge } from "../findings/severity-badge";
import styles from "./hosts.module.css";
import { TableScroll } from "~/components/table-scroll";

/** Hosts running tide-agent with their health at a glance; refreshed every 10 s like the fleet page. */
export function HostList() {
  const trpc = useTRPC();
  const hosts = useQuery({ ...trpc.hosts.list.queryOptions(), refetchInterval: 10_000 });
  if (hosts.error) return <ErrorNotice error={hosts.error} />;
  if (!hosts.data) return <p className="muted">Loading hosts…</p>;
  return (
    <div className={styles.page}>
      <section className="panel" aria-labelledby="hosts-heading">
        <header>
          <h2 id="hosts-heading">Hosts</h2>
          <span className="muted">{hosts.data.length}</span>
          <AddHostButton />
        </header>
        {hosts.data.length === 0 ? (
          <p className="body muted">
            No hosts yet. Add one: Add host gives the command to run on it (tide-agent enroll …).
          </p>
        ) : (
          <TableScroll label="Hosts">
            <table className="data" data-testid="hosts-table">
              <thead>
                <tr>
                  <th>Host</th>
                  <th>Health</th>
                  <th className="num">Open findings</th>
                  <th>Last seen</th>
                  <th>Roles</th>
                  <th>Agent</th>
                  <th>Kernel</th>
                </tr>
              </thead>
              <tbody>
                {hosts.data.map((h) => (
                  <tr
                    key={h.id}
                    data-testid="host-row"
                    data-hostname={h.name}
                    data-severity={h.health.worstSeverity ?? "ok"}
                    data-stale={h.health.stale}
                  >
                    <td>
                      <Link href={`/hosts/${h.id}`}>{h.name}</Link>
                    </td>
                    <td>
                      <SeverityBadge severity={h.health.worstSeverity} />
                    </td>
                    <td className="num">
                      {h.health.openFindings > 0 ? (
                        <Link href={`/findings?host=${h.id}`}>{h.health.openFindings}</Link>
                      ) : (
                        <span className="muted">0</span>
                      )}
                    </td>
                    <td>
                      {h.lastSeenAt ? <TimeAgo iso={h.lastSeenAt} /> : <span className="muted">never</span>}
                      {h.health.stale && (
                        <span className={styles.stale} title="No word from the agent for more than 30 s">
                          {" "}
                          stale
                        </span>
                      )}
                    </td>
                    <td>{h.roles.join(", ") || "—"}</td>
                    <td className="mono" title={h.versionSkew ?? undefined}>
                      {h.agentVersion ?? "—"}
                      {h.versionSkew && <span className={styles.versionSkew}> too far from the console</span>}
                    </td>
                    <td className="mono muted">{h.kernelRelease ?? "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </section>
      <EnrollmentTokensPanel />
    </div>
  );
}
