import { defineConfig } from "vitest/config";

// Test tiers are in the file name (cal.com habit):
//   *.test.ts              unit: pure logic, no I/O beyond fixtures
//   *.integration-test.ts  integration: real PostgreSQL (an embedded cluster the test run owns)
//   *.lab-test.ts          lab: real network namespaces, directors and proxies (root; packages/lab)
// Tests sit next to the code they test; system tests, which span the agent, the console and the
// lab, live in packages/system-tests (their own workspace, reaching the others through package exports).
export default defineConfig({
  test: {
    reporters: ["default", "./packages/devstack/src/vitest-summary-reporter.ts"],
    projects: [
      {
        test: {
          name: "unit",
          include: ["packages/*/src/**/*.test.ts", "apps/*/src/**/*.test.ts", "apps/*/server/**/*.test.ts"],
          environment: "node",
        },
      },
      {
        test: {
          name: "integration",
          include: [
            "packages/*/src/**/*.integration-test.ts",
            "apps/*/src/**/*.integration-test.ts",
            "apps/*/server/**/*.integration-test.ts",
            "packages/system-tests/**/*.integration-test.ts",
          ],
          environment: "node",
          globalSetup: ["./packages/devstack/src/integration-global-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: "lab",
          include: [
            "packages/*/src/**/*.lab-test.ts",
            "apps/*/src/**/*.lab-test.ts",
            "packages/system-tests/**/*.lab-test.ts",
          ],
          environment: "node",
          testTimeout: 300_000,
          hookTimeout: 300_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
