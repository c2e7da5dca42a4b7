/** tide-agent version (semver; kept in step with package.json). */
export const AGENT_VERSION = "0.1.0";
