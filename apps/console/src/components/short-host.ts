/** "proxy-api-03.dc1.example.net" -> "proxy-api-03": the part that differs between proxies. */
export function shortHost(hostname: string): string {
  const dot = hostname.indexOf(".");
  return dot > 0 ? hostname.slice(0, dot) : hostname;
}

/**
 * Short names for hosts shown together, still telling them apart: the domain all of them share
 * is dropped, the labels that differ are kept. "director-01.dc1.example.net" and
 * "director-01.dc2.example.net" become "director-01.dc1" and "director-01.dc2" (shortHost would
 * make both "director-01"); hosts in one domain become their first label. A single host gets
 * shortHost's name; addresses are left whole. Returns a map from each full name to its short name.
 */
export function shortHostNames(hostnames: readonly string[]): Map<string, string> {
  const unique = [...new Set(hostnames)];
  // An address has no domain to drop: "10.0.1.5" and "10.0.2.5" share ".5", which means nothing.
  if (unique.some((h) => h.includes(":") || /^[\d.]+$/.test(h))) return new Map(unique.map((h) => [h, h]));
  if (unique.length <= 1) return new Map(unique.map((h) => [h, shortHost(h)]));
  const labels = unique.map((h) => h.split("."));
  // Labels shared at the end by every name, but never a whole name.
  let common = 0;
  const shortest = Math.min(...labels.map((l) => l.length));
  while (common < shortest - 1) {
    const label = labels[0]![labels[0]!.length - 1 - common];
    if (!labels.every((l) => l[l.length - 1 - common] === label)) break;
    common++;
  }
  return new Map(unique.map((h, i) => [h, labels[i]!.slice(0, labels[i]!.length - common).join(".")]));
}
