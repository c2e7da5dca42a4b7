"use client";

import { Role, type UserSummary } from "@tide/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { ConfirmAction } from "~/components/confirm-action";
import { FormError } from "~/components/form-error";
import { ShownOnceSecret } from "~/components/shown-once-secret";
import { TimeAgo } from "~/components/time-ago";
import { useTRPC } from "~/trpc/react";
import styles from "./users.module.css";

/** One user: change role, disable/enable, reset password (the new one is shown once). */
export function UserRow({ user, isMe }: { user: UserSummary; isMe: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const onSuccess = () => queryClient.invalidateQueries(trpc.users.list.queryFilter());
  const update = useMutation(trpc.users.update.mutationOptions({ onSuccess }));
  const disable = useMutation(trpc.users.disable.mutationOptions({ onSuccess }));
  const enable = useMutation(trpc.users.enable.mutationOptions({ onSuccess }));
  const reset = useMutation(trpc.users.resetPassword.mutationOptions({ onSuccess }));
  const mutations = [update, disable, enable, reset];
  const error = mutations.find((m) => m.error)?.error;
  const pending = mutations.some((m) => m.isPending);
  const clear = () => mutations.forEach((m) => m.reset());
  const disabled = user.disabledAt !== null;

  return (
    <tr
      className={disabled ? styles.disabled : ""}
      data-testid="user-row"
      data-email={user.email}
      data-role={user.role}
      data-disabled={disabled ? "true" : "false"}
    >
      <td>
        {user.email}
        {isMe && <span className="muted"> (you)</span>}
      </td>
      <td>{user.name}</td>
      <td>
        <select
          aria-label={`Role of ${user.email}`}
          value={user.role}
          disabled={pending}
          onChange={(e) => {
            clear();
            update.mutate({ userId: user.id, role: Role.parse(e.target.value) });
          }}
          data-testid="user-role-select"
        >
          {Role.options.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </td>
      <td data-testid="user-status">
        {disabled && user.disabledAt ? (
          <>
            disabled <TimeAgo iso={user.disabledAt} />
          </>
        ) : (
          "enabled"
        )}
      </td>
      <td className={styles.wrapCell}>
        <div className={styles.actions}>
          {disabled ? (
            <button
              type="button"
              className="small"
              disabled={pending}
              onClick={() => {
                clear();
                enable.mutate({ userId: user.id });
              }}
              data-testid="enable-user"
            >
              Enable
            </button>
          ) : (
            <ConfirmAction
              label="Disable"
              question={`Disable ${user.email}? Their sessions end and their API tokens stop working.`}
              onConfirm={() => {
                clear();
                disable.mutate({ userId: user.id });
              }}
              pending={pending}
              testId="disable-user"
            />
          )}
          <ConfirmAction
            label="Reset password"
            question={`Set a new password for ${user.email}? Their sessions end.`}
            confirmLabel="Reset"
            onConfirm={() => {
              clear();
              reset.mutate({ userId: user.id });
            }}
            pending={pending}
            testId="reset-password"
          />
        </div>
        {reset.data?.password && (
          <ShownOnceSecret
            title={`New password for ${reset.data.user.email}:`}
            secret={reset.data.password}
            onDismiss={() => reset.reset()}
            testId="reset-password-secret"
          />
        )}
        <FormError error={error} testId="user-error" />
      </td>
    </tr>
  );
}
