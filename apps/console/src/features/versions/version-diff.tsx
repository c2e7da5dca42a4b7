"use client";

import { useQuery } from "@tanstack/react-query";
import { ErrorNotice } from "~/components/error-notice";
import { TableDiffView } from "~/features/diff/table-diff-view";
import { useTRPC } from "~/trpc/react";
import styles from "./versions.module.css";

/** The diff between two versions (immutable, so cached for good). */
export function VersionDiff({ fromId, toId }: { fromId: string; toId: string }) {
  const trpc = useTRPC();
  const diff = useQuery({
    ...trpc.tables.diff.queryOptions({ fromVersionId: fromId, toVersionId: toId }),
    staleTime: Infinity,
  });
  return (
    <section className="panel" aria-labelledby="diff-heading" data-testid="version-diff">
      <header className={styles.diffHead}>
        <h2 id="diff-heading">
          Diff{" "}
          {diff.data && (
            <span data-testid="diff-range" data-from={diff.data.from.version} data-to={diff.data.to.version}>
              v{diff.data.from.version} → v{diff.data.to.version}
            </span>
          )}
        </h2>
        {diff.data && (
          <span className="muted">
            {diff.data.to.cause}
            {diff.data.to.reason ? ` · “${diff.data.to.reason}”` : ""} · {diff.data.to.actor}
          </span>
        )}
      </header>
      <div className="body">
        {diff.error ? (
          <ErrorNotice error={diff.error} />
        ) : diff.data ? (
          <TableDiffView diff={diff.data.diff} />
        ) : (
          <p className="muted">Comparing tables…</p>
        )}
      </div>
    </section>
  );
}
