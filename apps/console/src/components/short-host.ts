/** "proxy-api-03.dc1.example.net" -> "proxy-api-03": the part that differs between proxies. */
export function shortHost(hostname: string): string {
  const dot = hostname.indexOf(".");
  return dot > 0 ? hostname.slice(0, dot) : hostname;
}

/**
 * Short names for hosts shown together, still telling them apart: each host's shortest leading
 * part (whole labels) that no other host shares. "director-01.dc1.example.net" and
 * "director-01.dc2.example.net" become "director-01.dc1" and "director-01.dc2" (shortHost would
 * make both "director-01"); hosts whose first labels differ become their first label, whatever
 * their domains. Addresses are left whole. Returns a map from each full name to its short name.
 */
export function shortHostNames(hostnames: readonly string[]): Map<string, string> {
  const unique = [...new Set(hostnames)];
  const labels = unique.map((h) => h.split("."));
  return new Map(
    unique.map((h, i) => {
      // An address has no parts to drop: "10.0.1.5" is not "10".
      if (h.includes(":") || /^[\d.]+$/.test(h)) return [h, h];
      const own = labels[i]!;
      for (let k = 1; k < own.length; k++) {
        const prefix = own.slice(0, k).join(".");
        if (!unique.some((other, j) => j !== i && (other === prefix || other.startsWith(`${prefix}.`))))
          return [h, prefix];
      }
      return [h, h];
    }),
  );
}
