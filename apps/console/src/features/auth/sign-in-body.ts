/**
 * Largest sign-in body read, in bytes: an email (320) and a password (1,024) with their names,
 * form-encoded (each byte may become 3), is under 5 KiB. Anything larger is refused (413) before
 * it is buffered: the route is open to anyone, so a flood of huge posts must cost nothing.
 */
export const SIGN_IN_BODY_LIMIT = 16 * 1024;

/**
 * Read a sign-in post: a form (no JavaScript) or JSON. "too_large" past SIGN_IN_BODY_LIMIT; a
 * body that does not parse comes back as null, for the schema to refuse.
 */
export async function readSignInBody(
  req: Request,
): Promise<{ isForm: boolean; body: unknown } | "too_large"> {
  const isForm = (req.headers.get("content-type") ?? "").includes("application/x-www-form-urlencoded");
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > SIGN_IN_BODY_LIMIT) return "too_large";
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (req.body) {
    const reader = req.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > SIGN_IN_BODY_LIMIT) {
        await reader.cancel().catch(() => undefined);
        return "too_large";
      }
      chunks.push(value);
    }
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  const text = new TextDecoder().decode(bytes);
  if (isForm) return { isForm, body: Object.fromEntries(new URLSearchParams(text)) };
  try {
    return { isForm, body: JSON.parse(text) as unknown };
  } catch {
    return { isForm, body: null };
  }
}
