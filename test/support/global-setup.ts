/**
 * vitest's globalSetup: the run's watchdog (run-world.ts) starts before any
 * test and ends every world the run started at teardown — and, since it
 * watches a pipe from this process, also when the runner is killed.
 */
import { startRunWatchdog } from "./run-world.js";

export default async function setup(): Promise<() => Promise<void>> {
  const watchdog = await startRunWatchdog();
  return () => watchdog.end();
}
