import Link from "next/link";
import { UtcTime } from "~/components/time-ago";
import styles from "./audit.module.css";
import type { RouterOutputs } from "~/trpc/types";
import { compactChange } from "./compact-change";

type Entry = RouterOutputs["audit"]["list"]["items"][number];

function Target({ e }: { e: Entry }) {
  const id = <span className="mono">{e.targetId}</span>;
  if (e.targetType === "pool") return <Link href={`/pools/${e.targetId}`}>pool {id}</Link>;
  if (e.poolId) {
    return (
      <Link href={`/pools/${e.poolId}`}>
        {e.targetType} {id}
      </Link>
    );
  }
  return (
    <>
      {e.targetType} {id}
    </>
  );
}

export function AuditRow({ entry: e }: { entry: Entry }) {
  const change = compactChange(e.before, e.after);
  const full = `${JSON.stringify(e.before)} → ${JSON.stringify(e.after)}`;
  return (
    <tr data-testid="audit-row" data-action={e.action} data-target-id={e.targetId}>
      <td>
        <UtcTime iso={e.createdAt} />
      </td>
      <td>
        {e.actor}
        <span className={styles.kind}>{e.actorKind}</span>
      </td>
      <td className="mono">{e.action}</td>
      <td>
        <Target e={e} />
      </td>
      <td className={styles.reason} title={e.reason}>
        {e.reason || <span className="muted">—</span>}
      </td>
      <td className={styles.json} title={full}>
        {change.before}
        <span className={styles.arrow}>→</span>
        {change.after}
      </td>
      <td>
        {e.tableVersionId && e.poolId ? (
          <Link href={`/pools/${e.poolId}/versions?to=${e.tableVersionId}`}>diff</Link>
        ) : null}
      </td>
    </tr>
  );
}
