import type { ChangeReport } from "@tide/contracts";
import Link from "next/link";
import { UtcTime } from "~/components/time-ago";
import { ChangeReportBadge } from "~/features/change-report/change-report-badge";
import type { RouterOutputs } from "~/trpc/types";
import { changedFields } from "./audit-change";
import styles from "./audit.module.css";

type Entry = RouterOutputs["audit"]["list"]["items"][number];

/** Where a target type's own page is, when it has one. */
function targetHref(e: Entry): string | null {
  if (e.targetType === "pool") return `/pools/${e.targetId}`;
  if (e.targetType === "host") return `/hosts/${e.targetId}`;
  if (e.poolId) return `/pools/${e.poolId}`;
  return null;
}

/** The target by name (its id on hover); an id only when the name is not known. */
function Target({ e }: { e: Entry }) {
  if (!e.targetId) return <span className="muted">{e.targetType}</span>;
  const label = e.targetName ?? e.targetId;
  const name = (
    <span className={e.targetName ? undefined : "mono"} title={`${e.targetType} ${e.targetId}`}>
      {label}
    </span>
  );
  const href = targetHref(e);
  const inPool =
    e.poolName && e.targetType !== "pool" ? <span className="muted"> in {e.poolName}</span> : null;
  return (
    <>
      <span className={styles.kind}>{e.targetType.replace("_", " ")}</span>{" "}
      {href ? <Link href={href}>{name}</Link> : name}
      {inPool}
    </>
  );
}

function Change({ e }: { e: Entry }) {
  const fields = changedFields(e.before, e.after);
  if (fields.length === 0) return <span className="muted">—</span>;
  return (
    <ul className={styles.change} data-testid="audit-change">
      {fields.map((f) => (
        <li key={f.field}>
          {f.field && <span className={styles.field}>{f.field}: </span>}
          {f.before === null ? (
            <span className={styles.after}>{f.after}</span>
          ) : f.after === null ? (
            <>
              <del className={styles.before}>{f.before}</del> <span className="muted">(removed)</span>
            </>
          ) : (
            <>
              <span className={styles.before}>{f.before}</span>
              <span className={styles.arrow} aria-label="changed to">
                →
              </span>
              <span className={styles.after}>{f.after}</span>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}

/**
 * One event. `report`: the change report of the table version it wrote (null: none, from before
 * reports; undefined: no version, or not read yet).
 */
export function AuditRow({ entry: e, report }: { entry: Entry; report?: ChangeReport | null }) {
  const refused = e.outcome === "refused";
  return (
    <tr
      data-testid="audit-row"
      data-action={e.action}
      data-outcome={e.outcome}
      data-target-id={e.targetId}
      className={refused ? styles.refused : undefined}
    >
      <td>
        <UtcTime iso={e.createdAt} />
      </td>
      <td className={styles.actor}>
        {e.actor}
        <span className={styles.kind}>{e.actorKind}</span>
      </td>
      <td>
        <span className="mono">{e.action}</span>
        {refused && (
          <span className={styles.refusedBadge} data-testid="audit-refused">
            refused
          </span>
        )}
      </td>
      <td className={styles.target}>
        <Target e={e} />
      </td>
      <td className={styles.reason} title={e.reason || undefined}>
        {e.reason || <span className="muted">—</span>}
      </td>
      <td className={styles.changeCell}>
        {refused ? (
          <span className={styles.refusal} data-testid="audit-refusal">
            {e.refusal}
          </span>
        ) : (
          <Change e={e} />
        )}
      </td>
      <td>
        {e.tableVersion !== null && e.poolId ? (
          <span className={styles.version}>
            <Link href={`/pools/${e.poolId}/versions?to=${e.tableVersion}`} title="What this version changed">
              v{e.tableVersion}
            </Link>
            <ChangeReportBadge report={report} />
          </span>
        ) : null}
      </td>
    </tr>
  );
}
