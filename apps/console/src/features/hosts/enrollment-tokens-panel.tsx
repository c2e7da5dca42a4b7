"use client";

import type { EnrollmentTokenSummary } from "@tide/contracts";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ConfirmAction } from "~/components/confirm-action";
import { ErrorNotice } from "~/components/error-notice";
import { FormError } from "~/components/form-error";
import { TableScroll } from "~/components/table-scroll";
import { formatUtc } from "~/components/time-ago";
import { useHasScope } from "~/features/session/session-context";
import { useTRPC } from "~/trpc/react";

/**
 * Enrollment tokens not used yet, with Revoke (admins only: the list is admin scope). Hidden when
 * there are none, so the Hosts page stays a list of hosts.
 */
export function EnrollmentTokensPanel() {
  const trpc = useTRPC();
  const isAdmin = useHasScope("admin");
  const tokens = useQuery({
    ...trpc.enrollmentTokens.list.queryOptions({}),
    enabled: isAdmin,
    refetchInterval: 10_000,
  });
  if (!isAdmin) return null;
  if (tokens.error) return <ErrorNotice error={tokens.error} />;
  const pending = (tokens.data ?? []).filter((t) => t.state === "pending");
  if (pending.length === 0) return null;
  return (
    <section className="panel" aria-labelledby="enrollment-tokens-heading">
      <header>
        <h2 id="enrollment-tokens-heading">Pending enrollment tokens</h2>
        <span className="muted">{pending.length}</span>
      </header>
      <TableScroll label="Pending enrollment tokens">
        <table className="data" data-testid="enrollment-tokens">
          <thead>
            <tr>
              <th>Host</th>
              <th>Roles</th>
              <th>Token</th>
              <th>Expires</th>
              <th>Made by</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {pending.map((t) => (
              <PendingTokenRow key={t.id} token={t} />
            ))}
          </tbody>
        </table>
      </TableScroll>
    </section>
  );
}

function PendingTokenRow({ token: t }: { token: EnrollmentTokenSummary }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const revoke = useMutation(
    trpc.enrollmentTokens.revoke.mutationOptions({
      onSettled: () => queryClient.invalidateQueries(trpc.enrollmentTokens.list.queryFilter()),
    }),
  );
  return (
    <tr data-testid="enrollment-token-row" data-hostname={t.hostname} data-token-id={t.id}>
      <td>{t.hostname}</td>
      <td>{t.roles.join(", ")}</td>
      <td className="mono">{t.prefix}…</td>
      <td className="mono">{formatUtc(t.expiresAt)}</td>
      <td>{t.createdBy}</td>
      <td>
        <ConfirmAction
          label="Revoke"
          question={`Revoke the token for ${t.hostname}? The enroll command made with it stops working.`}
          onConfirm={() => revoke.mutate({ tokenId: t.id })}
          pending={revoke.isPending}
          testId="revoke-enrollment-token"
        />
        <FormError error={revoke.error} testId="revoke-enrollment-token-error" />
      </td>
    </tr>
  );
}
