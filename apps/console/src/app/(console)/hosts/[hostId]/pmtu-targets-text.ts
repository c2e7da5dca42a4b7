/**
 * The PMTU targets text box: one target per line, "address-or-name [size,size,…]". Read and checked
 * here, in the browser, against the same limits as the API (hosts.schema.ts PmtuTargetSpec and
 * PmtuTargetsInput), so a bad line is named in a plain sentence and never sent.
 */

export interface PmtuTarget {
  target: string;
  sizes: number[];
}

/** ping -M do payload sizes the API accepts, in bytes (IPv4's minimum MTU to a jumbo frame). */
export const MIN_SIZE = 68;
export const MAX_SIZE = 9000;
/** Sizes per target and targets per host the API accepts. */
export const MAX_SIZES = 8;
export const MAX_TARGETS = 32;
const MAX_TARGET_LENGTH = 253;
/** An IP address or a host name, as the API checks it. */
const TARGET = /^[A-Za-z0-9][A-Za-z0-9.:_-]*$/;

export type ParsedTargets = { ok: true; targets: PmtuTarget[] } | { ok: false; problems: string[] };

/**
 * Reads the text box. Sizes follow the target, separated by commas or spaces ("10.30.0.2 1472,1200"
 * or "10.30.0.2 1472 1200"); blank lines are skipped. Every problem is a sentence naming the line,
 * the value and what is accepted.
 */
export function parseTargets(text: string): ParsedTargets {
  const targets: PmtuTarget[] = [];
  const problems: string[] = [];
  const firstLine = new Map<string, number>();
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (!line) return;
    const at = `Line ${i + 1}`;
    const [target = "", ...rest] = line.split(/\s+/);
    if (target.length > MAX_TARGET_LENGTH) {
      problems.push(`${at}: the target is ${target.length} characters long; at most ${MAX_TARGET_LENGTH}.`);
    } else if (!TARGET.test(target)) {
      problems.push(
        `${at}: '${target}' is not a target; it must be an IP address or a host name ` +
          "(letters, digits, '.', ':', '_' and '-', starting with a letter or digit).",
      );
    }
    const seen = firstLine.get(target);
    if (seen !== undefined)
      problems.push(`${at}: '${target}' is already on line ${seen}; list each target once.`);
    else firstLine.set(target, i + 1);

    const sizes: number[] = [];
    for (const word of rest.flatMap((w) => w.split(",")).filter(Boolean)) {
      const size = /^\d+$/.test(word) ? Number(word) : NaN;
      if (!Number.isSafeInteger(size) || size < MIN_SIZE || size > MAX_SIZE) {
        problems.push(
          `${at}: '${word}' is not a packet size; sizes are whole numbers from ${MIN_SIZE} to ${MAX_SIZE}.`,
        );
      } else if (!sizes.includes(size)) {
        sizes.push(size);
      }
    }
    if (sizes.length > MAX_SIZES) {
      problems.push(`${at}: ${sizes.length} sizes; at most ${MAX_SIZES} per target.`);
    }
    targets.push({ target, sizes });
  });
  if (targets.length > MAX_TARGETS) {
    problems.push(`${targets.length} targets; at most ${MAX_TARGETS} per host.`);
  }
  return problems.length ? { ok: false, problems } : { ok: true, targets };
}

export function formatTargets(targets: readonly PmtuTarget[]): string {
  return targets.map((t) => (t.sizes.length ? `${t.target} ${t.sizes.join(",")}` : t.target)).join("\n");
}
