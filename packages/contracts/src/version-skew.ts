/**
 * Version skew between a console and its agents. They are upgraded one host at a time, so for a
 * while a fleet runs two releases side by side: an agent one minor version older or newer than
 * its console keeps working (every reply it gets may carry fields it does not know, and it ignores
 * them); one further apart is refused with this module's reason and shown on its host page.
 *
 * The console names its version in a header on every answer to an agent, the agent its own in
 * its hello (AgentHello.agentVersion) and in a header on every call.
 */

/** Response header: the console's Tide version. */
export const CONSOLE_VERSION_HEADER = "x-tide-console-version";
/** Request header: the agent's Tide version. */
export const AGENT_VERSION_HEADER = "x-tide-agent-version";
/** How many minor versions an agent may be from its console, either way (same major version). */
export const MAX_MINOR_SKEW = 1;

export interface ReleaseVersion {
  major: number;
  minor: number;
  patch: number;
}

/** major.minor.patch with an optional -pre or +build part ("0.2.0+deb13"); null when it is not one. */
export function parseReleaseVersion(text: string): ReleaseVersion | null {
  const m = /^v?(\d{1,6})\.(\d{1,6})\.(\d{1,6})(?:[-+~][0-9A-Za-z.+~-]*)?$/.exec(text.trim());
  if (!m) return null;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) };
}

export type VersionSkew = { compatible: true; reason: null } | { compatible: false; reason: string };

/**
 * Whether an agent of `agentVersion` may work with a console of `consoleVersion`, and if not, a
 * plain reason naming both and saying what to do.
 */
export function versionSkew(consoleVersion: string, agentVersion: string): VersionSkew {
  const c = parseReleaseVersion(consoleVersion);
  const a = parseReleaseVersion(agentVersion);
  if (!c || !a) {
    const which = !c ? `console version "${consoleVersion}"` : `agent version "${agentVersion}"`;
    return { compatible: false, reason: `The ${which} is not a release version (major.minor.patch).` };
  }
  const minorGap = Math.abs(a.minor - c.minor);
  if (a.major === c.major && minorGap <= MAX_MINOR_SKEW) return { compatible: true, reason: null };
  const agentOlder = a.major < c.major || (a.major === c.major && a.minor < c.minor);
  const apart =
    a.major !== c.major
      ? `from another major version than the console (${consoleVersion})`
      : `${minorGap} minor versions ${agentOlder ? "older" : "newer"} than the console (${consoleVersion})`;
  return {
    compatible: false,
    reason:
      `tide-agent ${agentVersion} is ${apart}: an agent may be at most ${MAX_MINOR_SKEW} minor version ` +
      `older or newer than its console. Upgrade ${agentOlder ? "the agent" : "the console"}.`,
  };
}
