"use client";

import { useQuery } from "@tanstack/react-query";
import { ErrorNotice } from "~/components/error-notice";
import { useHasScope } from "~/features/session/session-context";
import { useTRPC } from "~/trpc/react";
import { CreateTokenForm } from "./create-token-form";
import { TokenList } from "./token-list";
import styles from "./tokens.module.css";

/** API tokens for runbooks and tidectl. Admin scope only (the API enforces it too). */
export function TokensView() {
  const trpc = useTRPC();
  const isAdmin = useHasScope("admin");
  const tokens = useQuery({ ...trpc.tokens.list.queryOptions(), enabled: isAdmin });

  if (!isAdmin) {
    return (
      <div className={`panel ${styles.notice}`} data-testid="tokens-forbidden">
        API tokens require the admin scope. Ask an admin for a token.
      </div>
    );
  }
  return (
    <div className={styles.page}>
      <h1>Tokens</h1>
      <CreateTokenForm />
      <section className="panel" aria-labelledby="tokens-heading">
        <header>
          <h2 id="tokens-heading">Issued tokens</h2>
          <span className="muted">{tokens.data?.length ?? ""}</span>
        </header>
        {tokens.error ? (
          <ErrorNotice error={tokens.error} />
        ) : tokens.data ? (
          <TokenList tokens={tokens.data} now={tokens.dataUpdatedAt} />
        ) : (
          <p className="body muted">Loading…</p>
        )}
      </section>
    </div>
  );
}
