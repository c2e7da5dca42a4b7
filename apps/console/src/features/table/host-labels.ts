import { shortHost } from "../../components/short-host";

/** Characters where a host name's common part may end ("proxy-www-" of "proxy-www-01"). */
const SEPARATORS = new Set(["-", "_", "."]);

/** Shortest common part worth hiding: "…01" for "w-01" saves nothing. */
const MIN_HIDDEN = 5;

/**
 * Each host name's distinguishing part for narrow screens: the common leading part of the pool's
 * proxies (up to a separator) becomes "…", so "proxy-www-01" and "proxy-www-02" read "…01" and
 * "…02" instead of both being cut to "proxy-www-0". Domains are dropped first (shortHost).
 */
export function distinctHostParts(hostnames: readonly string[]): Map<string, string> {
  // Without the domain unless that is what tells two apart ("edge-01.fra" and "edge-01.ams").
  const byLabel = hostnames.map(shortHost);
  const shorts = new Set(byLabel).size < new Set(hostnames).size ? [...hostnames] : byLabel;
  const out = new Map<string, string>();
  if (new Set(shorts).size < 2) {
    hostnames.forEach((h, i) => out.set(h, shorts[i]!));
    return out;
  }
  let common = shorts[0]!;
  for (const s of shorts) {
    let n = 0;
    while (n < common.length && n < s.length && common[n] === s[n]) n++;
    common = common.slice(0, n);
  }
  // Back off to the last separator, so "…01" not "…1" when names are "www-01" and "www-02".
  let cut = common.length;
  while (cut > 0 && !SEPARATORS.has(common[cut - 1]!)) cut--;
  hostnames.forEach((h, i) => {
    const s = shorts[i]!;
    out.set(h, cut >= MIN_HIDDEN && s.length > cut ? `…${s.slice(cut)}` : s);
  });
  return out;
}
