"use client";

import type { ApiTokenSummary } from "@tide/contracts";
import { TimeAgo, UtcTime } from "~/components/time-ago";
import { RevokeToken } from "./revoke-token";
import styles from "./tokens.module.css";
import { TableScroll } from "~/components/table-scroll";

function status(t: ApiTokenSummary, now: number): "revoked" | "expired" | "active" {
  if (t.revokedAt) return "revoked";
  if (t.expiresAt && Date.parse(t.expiresAt) <= now) return "expired";
  return "active";
}

const statusClass = {
  revoked: styles.statusRevoked,
  expired: styles.statusExpired,
  active: styles.statusActive,
};

export function TokenList({ tokens, now }: { tokens: ApiTokenSummary[]; now: number }) {
  return (
    <TableScroll label="API tokens">
      <table className="data" data-testid="token-list">
        <thead>
          <tr>
            <th>Name</th>
            <th>Prefix</th>
            <th>Scopes</th>
            <th>Created by</th>
            <th>Created</th>
            <th>Last used</th>
            <th>Expires</th>
            <th>Status</th>
            <th className={styles.actions}>Actions</th>
          </tr>
        </thead>
        <tbody>
          {tokens.map((t) => {
            const s = status(t, now);
            return (
              <tr
                key={t.id}
                className={s === "active" ? "" : styles.revoked}
                data-testid="token-row"
                data-token-id={t.id}
                data-status={s}
              >
                <td>{t.name}</td>
                <td className="mono">{t.prefix}…</td>
                <td className="mono">{t.scopes.join(", ")}</td>
                <td>{t.createdBy}</td>
                <td>
                  <UtcTime iso={t.createdAt} />
                </td>
                <td>
                  {t.lastUsedAt ? <TimeAgo iso={t.lastUsedAt} /> : <span className="muted">never</span>}
                </td>
                <td>{t.expiresAt ? <UtcTime iso={t.expiresAt} /> : <span className="muted">never</span>}</td>
                <td className={`${styles.status} ${statusClass[s]}`}>
                  {s}
                  {t.revokedAt && (
                    <>
                      {" "}
                      <TimeAgo iso={t.revokedAt} />
                    </>
                  )}
                </td>
                <td className={styles.actions}>
                  {s !== "revoked" && <RevokeToken tokenId={t.id} name={t.name} />}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </TableScroll>
  );
}
