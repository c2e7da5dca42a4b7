"use client";

import { ENROLLMENT_DEFAULT_TTL_MINUTES, type EnrollmentTokenCreated, type HostRole } from "@tide/contracts";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import { FieldError } from "~/components/field-error";
import { fieldErrorsOf } from "~/components/field-errors";
import { FormError } from "~/components/form-error";
import { ShownOnceSecret } from "~/components/shown-once-secret";
import { formatUtc } from "~/components/time-ago";
import { useTRPC } from "~/trpc/react";
import styles from "./hosts-admin.module.css";

/** The roles an admin picks for a new host (a host with neither only samples: role "host"). */
const ROLES: { role: HostRole; label: string }[] = [
  { role: "proxy", label: "proxy (tide-redirect)" },
  { role: "director", label: "director (tide-director)" },
];

/** Token lifetimes offered, minutes (the API takes 5 to 10,080). */
const EXPIRIES: { label: string; minutes: number }[] = [
  { label: "15 minutes", minutes: 15 },
  { label: "1 hour", minutes: ENROLLMENT_DEFAULT_TTL_MINUTES },
  { label: "24 hours", minutes: 24 * 60 },
  { label: "7 days", minutes: 7 * 24 * 60 },
];

/**
 * Add a host: its name, roles and how long the one-time token lives. On success the exact command
 * to run on the host is shown once, with when its token expires.
 */
export function AddHostForm({ onDone }: { onDone: () => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const id = useId();
  const [hostname, setHostname] = useState("");
  const [roles, setRoles] = useState<HostRole[]>(["proxy"]);
  const [minutes, setMinutes] = useState(ENROLLMENT_DEFAULT_TTL_MINUTES);
  const create = useMutation(
    trpc.enrollmentTokens.create.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries(trpc.enrollmentTokens.list.queryFilter()),
    }),
  );
  const fields = fieldErrorsOf(create.error);

  function toggle(role: HostRole, on: boolean) {
    setRoles((r) => (on ? [...new Set([...r, role])] : r.filter((x) => x !== role)));
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    create.mutate({
      hostname: hostname.trim(),
      roles: roles.length > 0 ? roles : ["host"],
      expiresInMinutes: minutes,
    });
  }

  if (create.data) return <EnrollCommand created={create.data} onDone={onDone} />;
  return (
    <form className={styles.form} onSubmit={submit} data-testid="add-host-form" noValidate>
      <label className={styles.field}>
        Host name (what its agent will report)
        <input
          value={hostname}
          onChange={(e) => setHostname(e.target.value)}
          required
          maxLength={253}
          placeholder="lb-fra-07"
          aria-invalid={fields.hostname ? true : undefined}
          aria-describedby={fields.hostname ? `${id}-hostname` : undefined}
          data-testid="add-host-hostname"
        />
        <FieldError id={`${id}-hostname`} message={fields.hostname} testId="add-host-hostname-error" />
      </label>
      <fieldset className={styles.fieldset}>
        <legend>Roles</legend>
        <div className={styles.checks}>
          {ROLES.map(({ role, label }) => (
            <label key={role}>
              <input
                type="checkbox"
                checked={roles.includes(role)}
                onChange={(e) => toggle(role, e.target.checked)}
                data-testid={`add-host-role-${role}`}
              />
              {label}
            </label>
          ))}
        </div>
        <p className={styles.note}>Neither: the agent only samples the host&apos;s kernel counters.</p>
      </fieldset>
      <label className={styles.field}>
        The token expires after
        <select
          value={minutes}
          onChange={(e) => setMinutes(Number(e.target.value))}
          data-testid="add-host-expiry"
        >
          {EXPIRIES.map((x) => (
            <option key={x.minutes} value={x.minutes}>
              {x.label}
            </option>
          ))}
        </select>
      </label>
      <div className={styles.actions}>
        <button
          type="submit"
          className="primary"
          disabled={create.isPending || hostname.trim() === ""}
          data-testid="add-host-submit"
        >
          {create.isPending ? "Making a token…" : "Make enrollment token"}
        </button>
      </div>
      <FormError error={create.error} isShown={(f) => f === "hostname"} testId="add-host-error" />
    </form>
  );
}

/** The command with its one-time token, shown once, and when the token expires. */
function EnrollCommand({ created, onDone }: { created: EnrollmentTokenCreated; onDone: () => void }) {
  const s = created.summary;
  return (
    <div className={styles.form} data-testid="add-host-created" data-hostname={s.hostname}>
      <ShownOnceSecret
        title={
          <>
            Run this on {s.hostname} as root: it enrolls the host as {s.roles.join(" and ")}. The token in it
            works once, until {formatUtc(s.expiresAt)}.
          </>
        }
        secret={created.command}
        onDismiss={onDone}
        testId="enroll-command"
      />
      <p className={styles.note}>
        The host trades the token for its own host token and shows up under Hosts once its agent reports. A
        token not used in time, or revoked below, is refused with the reason.
      </p>
    </div>
  );
}
