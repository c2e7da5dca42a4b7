/** A content hash shown by its first 12 hex digits; the full hash is the tooltip. */
export function HashPrefix({ hash }: { hash: string }) {
  return (
    <code title={hash} data-testid="hash-prefix">
      {hash.slice(0, 12)}
    </code>
  );
}
