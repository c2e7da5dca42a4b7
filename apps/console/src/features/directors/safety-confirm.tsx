"use client";

import type { DirectorRemovalPreview, UnassignPreview } from "@tide/contracts";
import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import formParts from "~/components/form-parts.module.css";
import { errorMessage } from "~/trpc/errors";
import { useTRPC } from "~/trpc/react";
import { reasonNeeded, reasonOffered, removalText, unassignText } from "./change-safety-text";
import styles from "./directors.module.css";

/**
 * A director change in two steps, like ConfirmAction, that first says what it breaks: the first
 * click asks the API's preview (issue 26 item 1), the question says whether connections break,
 * and Confirm waits for a reason when the proxies report some that do (as the API does); when
 * their count is unknown the reason is offered, not required.
 * `testId` names the first button; `confirm-${testId}`, `${testId}-safety` and `${testId}-reason`
 * the rest.
 */
function SafetyConfirm({
  label,
  asking,
  setAsking,
  safety,
  pending,
  testId,
  onConfirm,
}: {
  label: string;
  asking: boolean;
  setAsking: (asking: boolean) => void;
  /** The preview in words; undefined while it loads. */
  safety: { text: string; breaks: boolean | null; broken: number | null } | undefined;
  pending: boolean;
  testId: string;
  onConfirm: (reason: string | undefined) => void;
}) {
  const [reason, setReason] = useState("");
  const first = useRef<HTMLButtonElement>(null);
  const refocus = useRef(false);
  useEffect(() => {
    if (asking || !refocus.current) return;
    refocus.current = false;
    first.current?.focus();
  }, [asking]);
  const cancel = () => {
    refocus.current = true;
    setReason("");
    setAsking(false);
  };
  if (!asking)
    return (
      <button
        ref={first}
        type="button"
        className="small danger"
        onClick={() => setAsking(true)}
        disabled={pending}
        data-testid={testId}
      >
        {label}
      </button>
    );
  const needs = reasonNeeded(safety);
  const offered = reasonOffered(safety);
  const missing = needs && reason.trim() === "";
  const blocked = safety === undefined ? "checking what breaks" : missing ? "give a reason first" : undefined;
  return (
    <span
      className={formParts.confirm}
      role="group"
      aria-label={label}
      onKeyDown={(e) => {
        if (e.key === "Escape") cancel();
      }}
    >
      <span
        className={
          safety?.breaks === true ? styles.breaks : safety?.breaks === null ? styles.unknown : undefined
        }
        role={safety?.breaks === true ? "alert" : undefined}
        data-testid={`${testId}-safety`}
        data-breaks={safety === undefined ? "loading" : String(safety.breaks)}
        data-count={safety?.broken ?? undefined}
        aria-busy={safety === undefined}
      >
        {safety?.text ?? "Checking what breaks…"}
      </span>
      {offered && (
        <input
          aria-label={`Reason to ${label.toLowerCase()}${needs ? " (required: connections break)" : ""}`}
          placeholder={needs ? "Reason (required)" : "Reason"}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          maxLength={500}
          required={needs}
          aria-required={needs}
          data-testid={`${testId}-reason`}
          autoFocus={needs}
        />
      )}
      <button
        type="button"
        className="small danger"
        onClick={() => {
          onConfirm(reason.trim() || undefined);
          setReason("");
          setAsking(false);
        }}
        disabled={pending || blocked !== undefined}
        title={blocked}
        data-testid={`confirm-${testId}`}
        autoFocus={!needs && safety !== undefined}
      >
        {label}
      </button>
      <button type="button" className="small" onClick={cancel}>
        Cancel
      </button>
    </span>
  );
}

/** A preview that failed: the change may still break connections, so a reason is asked. */
function failed(error: unknown) {
  return { text: `Could not check what breaks: ${errorMessage(error)}`, breaks: null, broken: null };
}

/** What a preview query says breaks, in words: its answer, why it failed, or nothing yet. */
function safetyOf<T extends { breaks: boolean | null; broken: number | null }>(
  preview: { data: T | undefined; error: unknown },
  text: (data: T) => string,
) {
  const data = preview.data;
  if (data) return { text: text(data), breaks: data.breaks, broken: data.broken };
  return preview.error ? failed(preview.error) : undefined;
}

/** Unassign one pool from a director, saying first whether its connections break. */
export function UnassignPool({
  directorId,
  poolId,
  pending,
  onUnassign,
}: {
  directorId: string;
  poolId: string;
  pending: boolean;
  onUnassign: (reason: string | undefined) => void;
}) {
  const trpc = useTRPC();
  const [asking, setAsking] = useState(false);
  const preview = useQuery({
    ...trpc.directors.previewUnassign.queryOptions({ directorId, poolId }),
    enabled: asking,
    staleTime: 0,
    gcTime: 0,
    retry: false,
  });
  const safety = safetyOf<UnassignPreview>(preview, unassignText);
  return (
    <SafetyConfirm
      label="Unassign"
      asking={asking}
      setAsking={setAsking}
      safety={asking && !preview.isFetching ? safety : undefined}
      pending={pending}
      testId="unassign-pool"
      onConfirm={onUnassign}
    />
  );
}

/** Remove a director, saying first which of its pools lose their connections. */
export function RemoveDirector({
  directorId,
  pending,
  onRemove,
}: {
  directorId: string;
  pending: boolean;
  onRemove: (reason: string | undefined) => void;
}) {
  const trpc = useTRPC();
  const [asking, setAsking] = useState(false);
  const preview = useQuery({
    ...trpc.directors.previewRemove.queryOptions({ directorId }),
    enabled: asking,
    staleTime: 0,
    gcTime: 0,
    retry: false,
  });
  const safety = safetyOf<DirectorRemovalPreview>(preview, removalText);
  return (
    <SafetyConfirm
      label="Remove"
      asking={asking}
      setAsking={setAsking}
      safety={asking && !preview.isFetching ? safety : undefined}
      pending={pending}
      testId="remove-director"
      onConfirm={onRemove}
    />
  );
}
