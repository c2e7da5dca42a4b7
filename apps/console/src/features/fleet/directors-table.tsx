import type { Director, PoolSummary } from "@tide/contracts";
import Link from "next/link";

export function DirectorsTable({ directors, pools }: { directors: Director[]; pools: PoolSummary[] }) {
  const poolName = new Map(pools.map((p) => [p.id, p.name]));
  return (
    <table className="data" data-testid="directors-table">
      <thead>
        <tr>
          <th>Director</th>
          <th>Id</th>
          <th>Pools served</th>
        </tr>
      </thead>
      <tbody>
        {directors.map((d) => (
          <tr key={d.id} data-testid="director-row">
            <td>{d.hostname}</td>
            <td className="mono muted">{d.id}</td>
            <td>
              {d.poolIds.length === 0
                ? "—"
                : d.poolIds.map((id, i) => (
                    <span key={id}>
                      {i > 0 && ", "}
                      <Link href={`/pools/${id}`}>{poolName.get(id) ?? id}</Link>
                    </span>
                  ))}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
