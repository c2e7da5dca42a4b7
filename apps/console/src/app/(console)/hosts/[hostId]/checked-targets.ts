/**
 * The path MTU targets a host checks come from two places: the console (set on the host page or
 * over REST, sent in the agent's desired state) and the agent's own config (`pmtuTargets` in
 * agent.json), which the console only learns from the results the agent reports. The page names
 * both, so "Checked targets" counts every path the table below shows.
 */
export interface CheckedTargets {
  /** Set in the console, in the console's order. */
  fromConsole: string[];
  /** Reported by the agent but not set in the console: its own config's, sorted. */
  fromAgent: string[];
}

export function checkedTargets(
  consoleTargets: readonly string[],
  reported: readonly string[],
): CheckedTargets {
  const set = new Set(consoleTargets);
  const fromAgent = [...new Set(reported.filter((t) => !set.has(t)))].sort();
  return { fromConsole: [...consoleTargets], fromAgent };
}
