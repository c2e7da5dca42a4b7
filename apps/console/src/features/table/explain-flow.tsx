"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { useTRPC } from "~/trpc/react";
import styles from "./forwarding-table.module.css";
import { parseEndpoint } from "./parse-endpoint";
import { formatRowHex } from "./row-number";

/**
 * Which row (and so which proxies) a client's packets use, computed by the server with the pool's
 * hash key and hash fields. The row is highlighted and scrolled into view.
 */
export function ExplainFlow({ versionId, onRow }: { versionId: string; onRow: (row: number) => void }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [client, setClient] = useState("");
  const [destination, setDestination] = useState("");
  const [inputError, setInputError] = useState<string | null>(null);

  const explain = useMutation({
    mutationFn: (input: { srcAddr: string; srcPort?: number; dstAddr?: string; dstPort?: number }) =>
      queryClient.fetchQuery(trpc.tables.explain.queryOptions({ versionId, ...input })),
    onSuccess: (result) => onRow(result.row),
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    const src = parseEndpoint(client);
    if (typeof src === "string") return setInputError(src);
    const dst = destination.trim() === "" ? null : parseEndpoint(destination);
    if (typeof dst === "string") return setInputError(`Destination: ${dst}`);
    setInputError(null);
    explain.mutate({
      srcAddr: src.address,
      srcPort: src.port,
      dstAddr: dst?.address,
      dstPort: dst?.port,
    });
  }

  const r = explain.data;
  return (
    <section className="panel" aria-labelledby="explain-heading">
      <header>
        <h2 id="explain-heading">Explain a flow</h2>
      </header>
      <div className="body">
        <form className={styles.explainForm} onSubmit={submit} data-testid="explain-form">
          <label>
            Client address[:port]
            <input
              value={client}
              onChange={(e) => setClient(e.target.value)}
              placeholder="198.51.100.7:45678 or [2001:db8::7]:45678"
              data-testid="explain-src"
            />
          </label>
          <label>
            Destination (VIP) address[:port], optional
            <input
              value={destination}
              onChange={(e) => setDestination(e.target.value)}
              placeholder="192.0.2.10:443"
              data-testid="explain-dst"
            />
          </label>
          <div>
            <button
              type="submit"
              className="primary small"
              disabled={explain.isPending}
              data-testid="explain-submit"
            >
              Explain
            </button>
          </div>
        </form>
        {inputError && (
          <p className={styles.error} role="alert">
            {inputError}
          </p>
        )}
        {explain.error && <ErrorNotice error={explain.error} />}
        {r && (
          <dl className={styles.kv} data-testid="explain-result" data-row={r.row}>
            <dt>Row</dt>
            <dd>
              <button type="button" className="small" onClick={() => onRow(r.row)} title="Scroll to the row">
                {formatRowHex(r.row)} ({r.row})
              </button>
            </dd>
            <dt>Primary</dt>
            <dd data-testid="explain-primary">
              {r.primary.hostname} {r.primary.address}
            </dd>
            <dt>Secondary</dt>
            <dd data-testid="explain-secondary">
              {r.secondary.hostname} {r.secondary.address}
            </dd>
            <dt>Digest</dt>
            <dd>{r.digest}</dd>
            <dt>GUE src port</dt>
            <dd>{r.outerSourcePort}</dd>
            <dt>Hash fields</dt>
            <dd>{r.hashFields.join(", ")}</dd>
          </dl>
        )}
      </div>
    </section>
  );
}
