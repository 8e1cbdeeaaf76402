import { runServeFleet } from "./serve-fleet.js";
const r = await runServeFleet({ conversations: Number(process.argv[2] ?? 10), steps: Number(process.argv[3] ?? 100), idleSeconds: Number(process.argv[4] ?? 5), turns: Number(process.argv[5] ?? 3), ...(process.env.SCALE_SERVE_BIN ? { builtBin: process.env.SCALE_SERVE_BIN } : {}), ...(process.env.SCALE_REPLAY_WINDOW ? { replayWindow: Number(process.env.SCALE_REPLAY_WINDOW) } : {}) });
const l = [...r.latenciesMs].sort((a, b) => a - b);
console.log(JSON.stringify({ ...r, latenciesMs: undefined, n: l.length, p50: l[Math.floor(l.length * 0.5)], p99: l[Math.floor(l.length * 0.99)] }));
