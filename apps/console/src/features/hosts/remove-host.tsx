"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useAdminReason } from "~/components/admin-only";
import { ConfirmAction } from "~/components/confirm-action";
import { FormError } from "~/components/form-error";
import { useTRPC } from "~/trpc/react";
import styles from "./hosts-admin.module.css";

/**
 * Remove a host (admins; others see it disabled with why). Its host token stops working at once;
 * the API refuses while a director has the host's name, and says so.
 */
export function RemoveHost({ hostId, name }: { hostId: string; name: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const reason = useAdminReason();
  const remove = useMutation(
    trpc.hosts.remove.mutationOptions({
      onSuccess: async () => {
        router.push("/hosts");
        await queryClient.invalidateQueries(trpc.hosts.list.queryFilter());
      },
    }),
  );
  return (
    <div className={styles.remove} data-testid="remove-host-bar">
      <ConfirmAction
        label="Remove host"
        question={`Remove ${name}? Its host token is revoked at once: its agent can no longer report. Its samples and findings are deleted.`}
        confirmLabel="Remove"
        onConfirm={() => remove.mutate({ hostId })}
        pending={remove.isPending}
        disabled={reason !== null}
        title={reason ?? undefined}
        testId="remove-host"
      />
      {reason && (
        <span className={styles.note} data-testid="admin-reason">
          {reason}
        </span>
      )}
      <FormError error={remove.error} testId="remove-host-error" />
    </div>
  );
}
