"use client";

import Script from "next/script";
import { useCallback, useEffect, useRef, useState } from "react";
import styles from "./api-docs.module.css";

/** The OpenAPI 3.0 form of /api/openapi.json (app/api/docs/openapi.json/route.ts). */
const VIEWER_DOCUMENT = "/api/docs/openapi.json";

interface SwaggerUIBundle {
  (options: Record<string, unknown>): unknown;
}

declare global {
  interface Window {
    SwaggerUIBundle?: SwaggerUIBundle;
  }
}

/**
 * Swagger UI over the API's document, from the console's own copy of swagger-ui-dist. It is set up
 * from here, not from an inline script (the CSP allows none), once the bundle has loaded. It reads
 * the 3.0 form (/api/docs/openapi.json), not the 3.1 contract: Swagger UI resolves a 3.1 document
 * through ApiDOM, which kept the page frozen for ~9 s of CPU (21–38 s on a busy 2-core machine)
 * before the first operation showed.
 */
export function ApiDocsView({ nonce }: { nonce: string | undefined }) {
  const root = useRef<HTMLDivElement>(null);
  const started = useRef(false);
  const [failed, setFailed] = useState(false);

  const start = useCallback(() => {
    const bundle = window.SwaggerUIBundle;
    if (started.current || !bundle || !root.current) return;
    started.current = true;
    bundle({
      url: VIEWER_DOCUMENT,
      domNode: root.current,
      deepLinking: false,
      docExpansion: "list",
      defaultModelsExpandDepth: 0,
      // No calls to swagger.io: the validator badge would fetch from there.
      validatorUrl: null,
      tryItOutEnabled: false,
      // Swagger UI draws its servers drop-down without a label (axe: select-name, critical).
      onComplete: () => root.current?.querySelector("select#servers")?.setAttribute("aria-label", "Server"),
    });
  }, []);

  // A bundle already loaded by an earlier visit (client navigation) fires no onLoad again.
  useEffect(() => start(), [start]);

  return (
    <div className={styles.page}>
      <link rel="stylesheet" href="/api/docs/assets/swagger-ui.css" />
      <h1>API docs</h1>
      <p className="muted">
        The REST API under <span className="mono">/api/v1</span>, from{" "}
        <a href="/api/openapi.json">/api/openapi.json</a> (OpenAPI 3.1; shown here in its 3.0 form, which this
        viewer draws faster). Send an API token as <span className="mono">Authorization: Bearer tide_…</span>.
      </p>
      {failed && (
        <p role="alert" data-testid="api-docs-error">
          The API viewer did not load. The document itself is at{" "}
          <a href="/api/openapi.json">/api/openapi.json</a>.
        </p>
      )}
      <div className={styles.viewer} ref={root} data-testid="api-docs" />
      <Script
        src="/api/docs/assets/swagger-ui-bundle.js"
        nonce={nonce}
        strategy="afterInteractive"
        onReady={start}
        onError={() => setFailed(true)}
      />
    </div>
  );
}
