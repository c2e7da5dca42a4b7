"use client";

import { useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState, type FormEvent } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { fieldErrorsOf } from "~/components/field-errors";
import { useTRPC } from "~/trpc/react";
import styles from "./forwarding-table.module.css";
import { parseEndpoint } from "./parse-endpoint";
import { formatRowHex } from "./row-number";

interface Flow {
  srcAddr: string;
  srcPort?: number;
  dstAddr?: string;
  dstPort?: number;
}

/** The flow two input texts describe, or the plain reason they do not describe one. */
function flowOf(client: string, destination: string): Flow | string {
  const src = parseEndpoint(client);
  if (typeof src === "string") return `Client: ${src}`;
  const dst = destination.trim() === "" ? null : parseEndpoint(destination);
  if (typeof dst === "string") return `Destination: ${dst}`;
  return {
    srcAddr: src.address,
    ...(src.port !== undefined ? { srcPort: src.port } : {}),
    ...(dst ? { dstAddr: dst.address } : {}),
    ...(dst?.port !== undefined ? { dstPort: dst.port } : {}),
  };
}

/** Field names of the explain call, as the form labels them. */
const FIELD_LABELS: Record<string, string> = {
  srcAddr: "Client address",
  srcPort: "Client port",
  dstAddr: "Destination",
  dstPort: "Destination port",
};

/** A refused explain in plain words: the server's sentence, or the field it could not read. */
function ExplainError({ error }: { error: unknown }) {
  const fields = Object.entries(fieldErrorsOf(error));
  const message = error instanceof Error ? error.message : "";
  if (fields.length === 0 || !message.startsWith("Invalid input:")) {
    return <ErrorNotice error={error} testId="explain-error" />;
  }
  return (
    <p role="alert" className={styles.error} data-testid="explain-error">
      {fields.map(([path, text]) => `${FIELD_LABELS[path] ?? path}: ${text}`).join(" ")}
    </p>
  );
}

/**
 * Which row (and so which proxies) a client's packets use, computed by the server with the pool's
 * hash key and hash fields. The row is highlighted and scrolled into view. The explained flow is
 * part of the page's URL (`initial` restores it); editing either field clears the old answer.
 */
export function ExplainFlow({
  versionId,
  initial,
  onRow,
  onExplained,
}: {
  versionId: string;
  initial: { src: string; dst: string };
  onRow: (row: number) => void;
  onExplained: (src: string, dst: string) => void;
}) {
  const trpc = useTRPC();
  const [client, setClient] = useState(initial.src);
  const [destination, setDestination] = useState(initial.dst);
  const [inputError, setInputError] = useState<string | null>(null);
  const restored = initial.src === "" ? null : flowOf(initial.src, initial.dst);
  const [asked, setAsked] = useState<Flow | null>(typeof restored === "object" ? restored : null);
  // A flow restored from the URL shows its answer without moving the row the URL selected.
  const jumpOnAnswer = useRef(false);

  const explain = useQuery({
    ...trpc.tables.explain.queryOptions({ versionId, ...(asked ?? { srcAddr: "" }) }),
    enabled: asked !== null,
    staleTime: Infinity,
    retry: false,
  });

  const r = asked ? explain.data : undefined;
  useEffect(() => {
    if (r && jumpOnAnswer.current) {
      jumpOnAnswer.current = false;
      onRow(r.row);
    }
  }, [r, onRow]);

  function edited() {
    setInputError(null);
    if (asked) {
      setAsked(null);
      onExplained("", "");
    }
  }

  function submit(e: FormEvent) {
    e.preventDefault();
    const flow = flowOf(client, destination);
    if (typeof flow === "string") return setInputError(flow);
    setInputError(null);
    jumpOnAnswer.current = true;
    setAsked(flow);
    onExplained(client.trim(), destination.trim());
    if (r && JSON.stringify(flow) === JSON.stringify(asked)) onRow(r.row);
  }

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
              onChange={(e) => {
                setClient(e.target.value);
                edited();
              }}
              placeholder="198.51.100.7:45678 or [2001:db8::7]:45678"
              data-testid="explain-src"
            />
          </label>
          <label>
            Destination (VIP) address[:port], optional
            <input
              value={destination}
              onChange={(e) => {
                setDestination(e.target.value);
                edited();
              }}
              placeholder="192.0.2.10:443"
              data-testid="explain-dst"
            />
          </label>
          <div>
            <button
              type="submit"
              className="primary small"
              disabled={asked !== null && explain.isFetching}
              data-testid="explain-submit"
            >
              Explain
            </button>
          </div>
        </form>
        {inputError && (
          <p className={styles.error} role="alert" data-testid="explain-input-error">
            {inputError}
          </p>
        )}
        {asked && explain.error && <ExplainError error={explain.error} />}
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
