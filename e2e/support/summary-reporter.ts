import type { FullConfig, FullResult, Reporter, TestCase, TestResult } from "@playwright/test/reporter";

/**
 * Prints where the screenshots are and a plain closing line "N passed, N failed" (same shape as the
 * other test tiers).
 */
export default class SummaryReporter implements Reporter {
  private readonly final = new Map<string, TestResult["status"]>();
  private outputDir = "";
  private screenshots = 0;

  onBegin(config: FullConfig): void {
    this.outputDir = config.projects[0]?.outputDir ?? "";
  }

  onTestEnd(test: TestCase, result: TestResult): void {
    this.final.set(test.id, result.status);
    // checkPage's screenshots are named <page>-<width>.png (a failure's own is "screenshot").
    this.screenshots += result.attachments.filter((a) => /-\d+\.png$/.test(a.name)).length;
  }

  onEnd(result: FullResult): void {
    let passed = 0;
    let failed = 0;
    for (const status of this.final.values()) {
      if (status === "passed") passed += 1;
      else if (status !== "skipped") failed += 1;
    }
    // A failing global setup runs no test: count the run itself as a failure.
    if (result.status !== "passed" && failed === 0) failed = 1;
    if (this.screenshots > 0 && this.outputDir) {
      process.stdout.write(
        `${this.screenshots} screenshots (<page>-<width>.png, one folder per test) in ${this.outputDir}/\n`,
      );
    }
    process.stdout.write(`${passed} passed, ${failed} failed\n`);
  }

  printsToStdio(): boolean {
    return false;
  }
}
