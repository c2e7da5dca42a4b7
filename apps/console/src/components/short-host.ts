/** "proxy-api-03.dc1.example.net" -> "proxy-api-03": the part that differs between proxies. */
export function shortHost(hostname: string): string {
  const dot = hostname.indexOf(".");
  return dot > 0 ? hostname.slice(0, dot) : hostname;
}
