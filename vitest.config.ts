import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // tmux and simulator tests start real processes; two cores are all CI has.
    maxWorkers: 2,
    reporters: ["default", "./test/support/summary-reporter.ts"],
    // Every world a test starts (tmux servers, simulators) ends with the run, even a killed one (test/support/run-world.ts).
    globalSetup: ["./test/support/global-setup.ts"],
  },
});
