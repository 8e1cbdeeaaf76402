import { runServeFleet } from "./serve-fleet.js";
const r = await runServeFleet({ conversations: 100, steps: 1000, idleSeconds: 5, turns: 1, builtBin: "/tmp/k/build/dist/cli/bin.js",
  onIdle: async (pid) => { process.kill(pid, "SIGUSR2"); await new Promise((res) => setTimeout(res, 20000)); } });
console.log(JSON.stringify({ ...r, latenciesMs: undefined }));
