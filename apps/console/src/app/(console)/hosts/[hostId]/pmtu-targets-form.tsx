"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { useHasScope } from "~/features/session/session-context";
import { useTRPC } from "~/trpc/react";
import { checkedTargets } from "./checked-targets";

interface Target {
  target: string;
  sizes: number[];
}

/** "10.30.0.2 1472,1200" per line -> targets; the server validates (and says what is wrong). */
export function parseTargets(text: string): Target[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .map((line) => {
      const [target = "", sizes = ""] = line.split(/\s+/, 2);
      return {
        target,
        sizes: sizes
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean)
          .map(Number),
      };
    });
}

export function formatTargets(targets: readonly Target[]): string {
  return targets.map((t) => (t.sizes.length ? `${t.target} ${t.sizes.join(",")}` : t.target)).join("\n");
}

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
  targets: Target[];
  reported: readonly string[];
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const canOperate = useHasScope("operate");
  const [text, setText] = useState<string | null>(null);
  const save = useMutation(
    trpc.hosts.setPmtuTargets.mutationOptions({
      onSuccess: () => {
        setText(null);
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
            save.mutate({ hostId, targets: parseTargets(text) });
          }}
        >
          <label htmlFor="pmtu-targets-text" className="muted">
            One target per line: address or host name, then optional ping -M do sizes (e.g.{" "}
            <span className="mono">10.30.0.2 1472,1200</span>).
          </label>
          <textarea
            id="pmtu-targets-text"
            className="mono"
            rows={4}
            style={{ width: "100%" }}
            value={text}
            onChange={(e) => setText(e.target.value)}
            data-testid="pmtu-targets-text"
          />
          {save.error && <ErrorNotice error={save.error} />}
          <button
            type="submit"
            className="small primary"
            disabled={save.isPending}
            data-testid="pmtu-targets-save"
          >
            {save.isPending ? "Saving…" : "Save"}
          </button>{" "}
          <button type="button" className="small" onClick={() => setText(null)}>
            Cancel
          </button>
        </form>
      )}
    </div>
  );
}
