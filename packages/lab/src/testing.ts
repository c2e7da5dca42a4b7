/**
 * Test support for other packages' lab-tier tests and benches, `@tide/lab/testing`: the real
 * console on a throwaway database (startConsoleStack) and the lab in console mode against it
 * (ConsoleLab). Not part of the lab's runtime entry point (it pulls in @tide/db).
 */
export { everyStep, startConsoleStack, type ConsoleStack } from "./console/console-stack";
export { ConsoleLab, until, type ConsoleLabOptions } from "./console/console-lab-harness";
