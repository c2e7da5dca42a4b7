/** One error type for the lab with a closed set of codes (dub habit). */
export type LabErrorCode =
  /** The lab needs root (namespaces, veths, af_packet). */
  | "not_root"
  /** A binary the lab needs (tide-director, ip, ethtool) is missing. */
  | "binary_missing"
  /** A command (ip, ethtool, sysctl, ...) exited non-zero. */
  | "command_failed"
  /** A command, a socket or a process did not answer in time. */
  | "timeout"
  /** The lab, or the named process, is not running. */
  | "not_running"
  /** A process the lab started exited when it should run. */
  | "process_exited"
  /** A control socket answered with an error or an unexpected reply. */
  | "control_error"
  /** Directors serve different tables, or not the one pushed. */
  | "hash_mismatch"
  /** A caller passed a name or value the topology does not have. */
  | "bad_argument"
  /** The console (console mode) refused a request or answered something unexpected. */
  | "console_error"
  /** The console's directors did not all reach the desired table in time. */
  | "not_in_sync";

export class LabError extends Error {
  override name = "LabError";
  readonly code: LabErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: LabErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.code = code;
    this.details = details;
  }
}

export function isLabError(e: unknown, code?: LabErrorCode): e is LabError {
  return e instanceof LabError && (code === undefined || e.code === code);
}
