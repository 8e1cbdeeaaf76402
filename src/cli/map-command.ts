import type { Command } from "./command.js";

// Placeholder until the map command lands; replaced by its owner.
export const mapCommand: Command = {
  name: "map",
  summary: "(not yet available)",
  help: "agy-bridge map: not yet available",
  async run(io) {
    io.stderr.write("agy-bridge map: not yet available\n");
    return 1;
  },
};
