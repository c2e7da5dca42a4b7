/**
 * waitFor (@tide/devstack, the one poll helper) for lab code: a wait that runs out is a LabError
 * "timeout" (the CLI and startFailure() report codes), and a LabError the probe throws (a process
 * that exited) ends the wait as it is.
 */
import { waitFor, type WaitOptions } from "@tide/devstack";
import { LabError, isLabError } from "./errors";

export async function labWaitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: WaitOptions,
): Promise<Exclude<T, undefined | false>> {
  try {
    return await waitFor(what, probe, options);
  } catch (e) {
    if (isLabError(e)) throw e;
    throw new LabError("timeout", (e as Error).message);
  }
}
