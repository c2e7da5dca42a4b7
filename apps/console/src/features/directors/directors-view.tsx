"use client";

import { useQuery } from "@tanstack/react-query";
import { useAdminReason } from "~/components/admin-only";
import { ErrorNotice } from "~/components/error-notice";
import { useTRPC } from "~/trpc/react";
import { DirectorRow } from "./director-row";
import styles from "./directors.module.css";
import { RegisterDirectorForm } from "./register-director-form";
import { TableScroll } from "~/components/table-scroll";

/** Directors and the pools they serve; admins register, assign, unassign and remove. */
export function DirectorsView() {
  const trpc = useTRPC();
  const reason = useAdminReason();
  const fleet = useQuery({ ...trpc.fleet.overview.queryOptions(), refetchInterval: 10_000 });
  if (fleet.error) return <ErrorNotice error={fleet.error} />;
  if (!fleet.data) return <p className="muted">Loading directors…</p>;
  const { directors, pools } = fleet.data;
  const canAdmin = reason === null;
  return (
    <div className={styles.page}>
      <div className={styles.title}>
        <h1>Directors</h1>
        {reason && (
          <span className="muted" data-testid="admin-reason">
            Changing directors: {reason}
          </span>
        )}
      </div>
      {canAdmin && <RegisterDirectorForm />}
      <section className="panel" aria-labelledby="directors-list-heading">
        <header>
          <h2 id="directors-list-heading">Directors</h2>
          <span className="muted">{directors.length}</span>
        </header>
        <TableScroll label="Directors">
          <table className="data" data-testid="admin-directors-table">
            <thead>
              <tr>
                <th>Director</th>
                <th>Pools served</th>
                {canAdmin && <th>Change</th>}
              </tr>
            </thead>
            <tbody>
              {directors.map((d) => (
                <DirectorRow key={d.id} director={d} pools={pools} canAdmin={canAdmin} />
              ))}
              {directors.length === 0 && (
                <tr>
                  <td colSpan={3} className="muted">
                    No directors registered.
                  </td>
                </tr>
              )}
            </tbody>
          </table>
        </TableScroll>
      </section>
    </div>
  );
}
