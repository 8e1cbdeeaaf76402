import type { Command } from "./command.js";

// Placeholder until the sim command lands; replaced by its owner.
export const simCommand: Command = {
  name: "sim",
  summary: "(not yet available)",
  help: "agy-bridge sim: not yet available",
  async run(io) {
    io.stderr.write("agy-bridge sim: not yet available\n");
    return 1;
  },
};
