/**
 * Stands in for the simulator under the agy launcher: serves plain HTTP on
 * the inherited fds 3 and 4, answering with what it was given (argv, the
 * ANTIGRAVITY_* environment, which fd served), and exits 42 on SIGTERM so a
 * test can see the launcher pass the child's status through.
 */
import { createServer } from "node:http";

const info = (fd: number) => ({
  fd,
  argv: process.argv.slice(2),
  env: {
    ANTIGRAVITY_CSRF_TOKEN: process.env.ANTIGRAVITY_CSRF_TOKEN ?? null,
    ANTIGRAVITY_LS_ADDRESS: process.env.ANTIGRAVITY_LS_ADDRESS ?? null,
    ANTIGRAVITY_LS_VERSION: process.env.ANTIGRAVITY_LS_VERSION ?? null,
    AGY_SIM_LAUNCHER_PID: process.env.AGY_SIM_LAUNCHER_PID ?? null,
  },
});
let listening = 0;
for (const fd of [3, 4]) {
  createServer((_req, res) => res.end(JSON.stringify(info(fd)))).listen({ fd }, () => {
    listening += 1;
    if (listening === 2) process.stdout.write("ready\n");
  });
}
process.on("SIGTERM", () => process.exit(42));
