/**
 * Reading a .deb's control fields (`dpkg-deb -f`): what the packages tier preinstalls in each
 * machine's image so that installing a Tide package there needs no mirror.
 */

/**
 * The Debian packages a control file's Depends and Recommends name, version constraints and
 * architecture qualifiers dropped; of alternatives (`a | b`) the first; Tide's own packages left out.
 */
export function dependenciesOf(control: string): string[] {
  const out: string[] = [];
  for (const field of ["Depends", "Recommends"]) {
    const m = new RegExp(`^${field}: (.*)$`, "m").exec(control);
    if (!m) continue;
    for (const clause of m[1]!.split(",")) {
      const first = clause
        .split("|")[0]!
        .replace(/\(.*?\)/g, "")
        .replace(/:any$/, "")
        .trim();
      if (first && !first.startsWith("tide-")) out.push(first);
    }
  }
  return [...new Set(out)];
}
