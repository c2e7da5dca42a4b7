"use client";

import Script from "next/script";
import { useCallback, useEffect, useRef, useState } from "react";
import styles from "./api-docs.module.css";

interface SwaggerUIBundle {
  (options: Record<string, unknown>): unknown;
}

declare global {
  interface Window {
    SwaggerUIBundle?: SwaggerUIBundle;
  }
}

/**
 * Swagger UI over /api/openapi.json, from the console's own copy of swagger-ui-dist. It is set up
 * from here, not from an inline script (the CSP allows none), once the bundle has loaded.
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
      url: "/api/openapi.json",
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
        <a href="/api/openapi.json">/api/openapi.json</a>. Send an API token as{" "}
        <span className="mono">Authorization: Bearer tide_…</span>.
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
