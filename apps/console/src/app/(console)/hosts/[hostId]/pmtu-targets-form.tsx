"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ErrorNotice } from "~/components/error-notice";
import formStyles from "~/components/form-parts.module.css";
import { useHasScope } from "~/features/session/session-context";
import { useTRPC } from "~/trpc/react";
import { checkedTargets } from "./checked-targets";
import { formatTargets, MAX_SIZE, MIN_SIZE, parseTargets, type PmtuTarget } from "./pmtu-targets-text";

/**
 * The path MTU targets the console asks this host's agent to check (PUT /api/v1/hosts/{id}/pmtu-targets).
 * Operators edit them; everyone sees them. The agent picks the list up with its next batch.
 * `reported` are the targets of the paths the agent reports: those the console did not set come
 * from the agent's own config, and are named as such (they cannot be edited here).
 */
export function PmtuTargetsForm({
  hostId,
  targets,
  reported,
}: {
  hostId: string;
  targets: PmtuTarget[];
  reported: readonly string[];
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const canOperate = useHasScope("operate");
  const [text, setText] = useState<string | null>(null);
  /** Lines the browser refused (never sent); cleared when the text changes. */
  const [problems, setProblems] = useState<string[]>([]);
  const save = useMutation(
    trpc.hosts.setPmtuTargets.mutationOptions({
      onSuccess: () => {
        setText(null);
        setProblems([]);
        // The page may have been opened by host name or id: refresh every hosts.* query.
        void queryClient.invalidateQueries({ queryKey: trpc.hosts.pathKey() });
      },
    }),
  );
  const editing = text !== null;
  const checked = checkedTargets(
    targets.map((t) => t.target),
    reported,
  );
  const count = checked.fromConsole.length + checked.fromAgent.length;
  return (
    <div className="body" data-testid="pmtu-targets">
      {!editing ? (
        <p className="muted">
          <span data-testid="pmtu-target-count" data-count={count}>
            Checked targets ({count}):
          </span>{" "}
          {checked.fromConsole.length === 0 ? (
            "none set in the console"
          ) : (
            <span className="mono" data-testid="pmtu-target-list">
              {checked.fromConsole.join(", ")}
            </span>
          )}
          {checked.fromAgent.length > 0 && (
            <>
              ; from the agent&apos;s config:{" "}
              <span
                className="mono"
                data-testid="pmtu-agent-target-list"
                title="Set in the agent's pmtuTargets (agent.json); change them on the host"
              >
                {checked.fromAgent.join(", ")}
              </span>
            </>
          )}{" "}
          <button
            type="button"
            className="small"
            disabled={!canOperate}
            title={canOperate ? "Edit the targets the agent checks" : "requires operate scope"}
            data-testid="pmtu-targets-edit"
            onClick={() => setText(formatTargets(targets))}
          >
            Edit
          </button>
        </p>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const parsed = parseTargets(text);
            if (!parsed.ok) {
              setProblems(parsed.problems);
              save.reset();
              return;
            }
            setProblems([]);
            save.mutate({ hostId, targets: parsed.targets });
          }}
        >
          <label htmlFor="pmtu-targets-text" className="muted">
            One target per line: address or host name, then optional ping -M do sizes in bytes, {MIN_SIZE}–
            {MAX_SIZE} (e.g. <span className="mono">10.30.0.2 1472,1200</span>).
          </label>
          <textarea
            id="pmtu-targets-text"
            className="mono"
            rows={4}
            style={{ width: "100%" }}
            value={text}
            onChange={(e) => {
              setText(e.target.value);
              setProblems([]);
            }}
            aria-invalid={problems.length > 0 || undefined}
            aria-describedby={problems.length > 0 ? "pmtu-targets-problems" : undefined}
            data-testid="pmtu-targets-text"
          />
          {problems.length > 0 && (
            <div
              role="alert"
              id="pmtu-targets-problems"
              className={formStyles.formError}
              data-testid="pmtu-targets-problems"
            >
              Not saved:
              <ul>
                {problems.map((p) => (
                  <li key={p} data-testid="pmtu-targets-problem">
                    {p}
                  </li>
                ))}
              </ul>
            </div>
          )}
          {save.error && <ErrorNotice error={save.error} />}
          <button
            type="submit"
            className="small primary"
            disabled={save.isPending}
            data-testid="pmtu-targets-save"
          >
            {save.isPending ? "Saving…" : "Save"}
          </button>{" "}
          <button
            type="button"
            className="small"
            onClick={() => {
              setText(null);
              setProblems([]);
              save.reset();
            }}
          >
            Cancel
          </button>
        </form>
      )}
    </div>
  );
}
