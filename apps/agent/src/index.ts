/**
 * @tide/agent as a library, for the tests and benches that run the agent in-process or reuse its
 * rules (packages/system-tests, packages/lab's agent configs, e2e's load benches). The shipped agent is the
 * bundle built from main.ts (`tide-agent`).
 */
export { Agent, HostObserver, type Tick } from "./agent";
export { resolveConfig, AgentConfig } from "./config";
export { backoffMs, BACKOFF_MIN_MS, BACKOFF_MAX_MS } from "./console/backoff";
export { BATCH_MAX_BYTES, boundedBatch, jsonBytes } from "./console/batch-size";
export { ConsoleLink, type ConsoleLinkOptions } from "./console/console-link";
export { checkTarget, execWithTimeout, type Exec, type ExecResult } from "./pmtu/prober";
