/**
 * The console's URL as a caller reached it, for text that sends someone back to it (the
 * `tide-agent enroll <URL> --token …` command). Read like the console's cookie and same-origin
 * checks read it (apps/console features/auth): the first X-Forwarded-Proto / X-Forwarded-Host
 * (a TLS-terminating proxy), else the Host header and the request URL's scheme.
 */

/** A host name, IPv4 or [IPv6] literal, with an optional port: nothing a shell would read as syntax. */
const HOST_PORT =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?$/;

function first(value: string | null): string | undefined {
  return value?.split(",")[0]?.trim() || undefined;
}

/**
 * `https://console.example.net` (scheme and host, no path), or null when the headers name no
 * usable host: a forged or odd Host must never end up in a command someone pastes into a shell.
 */
export function requestOrigin(url: string | undefined, headers: Headers): string | null {
  let parsed: URL | null = null;
  try {
    parsed = url ? new URL(url) : null;
  } catch {
    parsed = null;
  }
  const proto = (first(headers.get("x-forwarded-proto")) ?? parsed?.protocol.replace(":", ""))?.toLowerCase();
  const host = first(headers.get("x-forwarded-host")) ?? headers.get("host")?.trim() ?? parsed?.host;
  if ((proto !== "http" && proto !== "https") || !host || !HOST_PORT.test(host)) return null;
  return `${proto}://${host.toLowerCase()}`;
}
