import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // tmux and simulator tests start real processes; two cores are all CI has.
    maxWorkers: 2,
    reporters: ["default", "./test/support/summary-reporter.ts"],
  },
});
