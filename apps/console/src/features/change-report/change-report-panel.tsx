import type { ChangeReport, ChangeReportBody, FlowKind } from "@tide/contracts";
import { shortHost } from "~/components/short-host";
import {
  clock,
  directorLine,
  FLOW_KIND_LABEL,
  FLOW_KINDS,
  flowCount,
  flowLine,
  headlineOf,
  perKindLine,
  predictedLines,
  windowLine,
} from "./change-report-text";
import styles from "./change-report.module.css";

const n = (v: number) => v.toLocaleString("en-US");

/** One kind's named flows (most recent first), folded: there may be 50 of them. */
function FlowsOfKind({ body, kind }: { body: ChangeReportBody; kind: FlowKind }) {
  const listed = body.listed[kind];
  if (listed.length === 0) return null;
  const count = body.flows[kind];
  return (
    <details className={styles.flows} data-testid={`change-report-flows-${kind}`}>
      <summary>
        {FLOW_KIND_LABEL[kind]}: {flowCount(body, kind)} {count === 1 ? "flow" : "flows"}
        {listed.length < count ? ` (the ${listed.length} most recent named)` : ""}
      </summary>
      <ul className={styles.flowList}>
        {listed.map((f) => (
          <li key={`${f.hostname}|${f.clientAddress}|${f.clientPort}|${f.address}|${f.port}`}>
            <span className="mono">{flowLine(f)}</span>
            <span className="muted">
              {" "}
              · {n(f.packets)} {f.packets === 1 ? "packet" : "packets"} · last {clock(f.lastAt)}
            </span>
          </li>
        ))}
      </ul>
    </details>
  );
}

function Measured({ body }: { body: ChangeReportBody }) {
  return (
    <>
      <dl className={styles.facts}>
        <dt>Window</dt>
        <dd data-testid="change-report-window">{windowLine(body)}</dd>
        <dt>Directors</dt>
        <dd>
          {body.directors.length === 0 ? (
            <span className="muted">none serve the pool</span>
          ) : (
            <ul className={styles.lines}>
              {body.directors.map((d) => (
                <li key={d.directorId} className={d.servedAt === null ? styles.notReported : undefined}>
                  {directorLine(d)}
                </li>
              ))}
            </ul>
          )}
        </dd>
        <dt>Flows</dt>
        <dd data-testid="change-report-counts">
          {FLOW_KINDS.map((k, i) => (
            <span key={k}>
              {i > 0 && " · "}
              {FLOW_KIND_LABEL[k]} <strong>{flowCount(body, k)}</strong>
            </span>
          ))}
          {body.atLeast && (
            <div className="muted">
              A proxy&apos;s flow readings were capped during the window: the counts are at least these.
            </div>
          )}
        </dd>
      </dl>
      <section aria-label="Proxies">
        <h3>Proxies</h3>
        <ul className={styles.proxies}>
          {body.proxies.map((p) => (
            <li
              key={p.hostname}
              className={styles.proxy}
              data-testid="change-report-proxy"
              data-hostname={p.hostname}
              data-reported={p.reported}
            >
              <span>
                <span className={styles.proxyName} title={p.hostname}>
                  {shortHost(p.hostname)}
                </span>
                {p.proxyId === null && <span className="muted"> (no longer in the pool)</span>}
                {": "}
                {p.reported ? (
                  "reported"
                ) : (
                  <span className={styles.notReported}>not reported: {p.reason ?? "no reason given"}</span>
                )}
              </span>
              <span>flows: {perKindLine(p.flows)}</span>
              <span className="muted">
                packets: {p.packets === null ? "no counters over the window" : perKindLine(p.packets)}
              </span>
            </li>
          ))}
        </ul>
      </section>
      {FLOW_KINDS.map((k) => (
        <FlowsOfKind key={k} body={body} kind={k} />
      ))}
    </>
  );
}

/**
 * What the change to a version did to the pool's established connections (its change report), for
 * the selected version of the versions page. `report` null: the version has none (written before
 * reports existed); undefined: not read yet.
 */
export function ChangeReportPanel({
  version,
  report,
}: {
  version: number | null;
  report: ChangeReport | null | undefined;
}) {
  const headline = report ? headlineOf(report) : null;
  const predicted = report ? predictedLines(report) : [];
  return (
    <section
      className={`panel ${styles.panel}`}
      aria-labelledby="change-report-heading"
      data-testid="change-report"
      data-status={report?.status ?? (report === null ? "none" : "loading")}
    >
      <header className={styles.head}>
        <h2 id="change-report-heading">Connections{version !== null ? ` · v${version}` : ""}</h2>
        <span className="muted">what this change did to established connections</span>
      </header>
      <div className={styles.body}>
        {report === undefined ? (
          <p className="muted">Reading the change report…</p>
        ) : report === null ? (
          <p className="muted">No change report: this version was written before change reports existed.</p>
        ) : (
          <>
            <p
              className={styles.verdict}
              role="status"
              data-testid="change-report-verdict"
              data-verdict={headline!.verdict}
            >
              {headline!.text}
            </p>
            {report.status !== "done" && (
              <p className="muted">
                {report.status === "measuring"
                  ? "The window is open: it ends once the pool's directors serve this version and a settle time has passed (or a newer version replaces it); then the report is written from every proxy's readings."
                  : "The report is written once every proxy's readings cover the window, or after a short wait without them."}
              </p>
            )}
            {predicted.length > 0 && (
              <div data-testid="change-report-predicted">
                <ul className={styles.lines}>
                  {predicted.map((line) => (
                    <li key={line}>{line}</li>
                  ))}
                </ul>
                <span className="muted">
                  Predicted: established connections in the change&apos;s preview; measured: flows
                  tide-redirect saw in the window.
                </span>
              </div>
            )}
            {report.report && <Measured body={report.report} />}
          </>
        )}
      </div>
    </section>
  );
}
