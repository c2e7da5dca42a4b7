"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { useTRPC } from "~/trpc/react";
import styles from "./tokens.module.css";

/** Revoke, in two steps: the first click asks, the second revokes; Keep or Escape puts focus back. */
export function RevokeToken({ tokenId, name }: { tokenId: string; name: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [asking, setAsking] = useState(false);
  const first = useRef<HTMLButtonElement>(null);
  const refocus = useRef(false);
  useEffect(() => {
    if (asking || !refocus.current) return;
    refocus.current = false;
    first.current?.focus();
  }, [asking]);
  const keep = () => {
    refocus.current = true;
    setAsking(false);
  };
  const revoke = useMutation(
    trpc.tokens.revoke.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries(trpc.tokens.list.queryFilter()),
    }),
  );
  if (revoke.error) return <ErrorNotice error={revoke.error} />;
  if (!asking) {
    return (
      <button
        ref={first}
        type="button"
        className="small danger"
        onClick={() => setAsking(true)}
        data-testid="revoke-token"
      >
        Revoke
      </button>
    );
  }
  return (
    <span
      className={styles.confirm}
      role="group"
      aria-label={`Revoke ${name}?`}
      onKeyDown={(e) => {
        if (e.key === "Escape") keep();
      }}
    >
      <span>Revoke “{name}”? Clients using it stop working.</span>
      <button
        type="button"
        className="small danger"
        onClick={() => revoke.mutate({ tokenId })}
        disabled={revoke.isPending}
        data-testid="confirm-revoke"
        autoFocus
      >
        Revoke
      </button>
      <button type="button" className="small" onClick={keep}>
        Keep
      </button>
    </span>
  );
}
