/**
 * The slash-command popup agy opens under the composer while the draft is a
 * bare `/word` (agy 1.1.27, spike-notes §13): five rows of `/command
 * description` filtered by prefix, `↓ N more`, a key-hint footer. Enter runs
 * the HIGHLIGHTED command, not the typed text — `/status` can go in as
 * `/statusline`.
 */
import { menuRows, movePointer } from "./menu-rows.js";

/** The simulator's slash commands (its own set; agy has ~46). */
export const SLASH_COMMANDS: readonly { name: string; description: string }[] = [
  { name: "/clear", description: "Start a new conversation" },
  { name: "/help", description: "Show help and available commands" },
  { name: "/model", description: "Switch the model and its effort" },
  { name: "/quit", description: "Exit the simulated agy" },
  { name: "/status", description: "Show the session status" },
  { name: "/statusline", description: "Configure the status line" },
  { name: "/usage", description: "Show token usage for this conversation" },
];

const VISIBLE = 5;
const NAME_COLUMN = 22;

export interface SlashPopup {
  readonly matches: readonly string[];
  readonly pointer: number;
  /** Re-filters for a new draft; the pointer returns to the first match when the filter changes. */
  filter(draft: string): void;
  move(delta: number): void;
  highlighted(): string | undefined;
  lines(width: number): string[];
}

/** agy 1.2.x also has `/effort` (spike-notes §13 #34, §13 #35). */
export const SLASH_COMMANDS_12: readonly { name: string; description: string }[] = [
  ...SLASH_COMMANDS.slice(0, 1),
  { name: "/effort", description: "Set the reasoning effort" },
  ...SLASH_COMMANDS.slice(1),
];

export function createSlashPopup(commands: readonly { name: string; description: string }[] = SLASH_COMMANDS): SlashPopup {
  let typed: string | undefined;
  let matches: typeof SLASH_COMMANDS = [];
  let pointer = 0;
  return {
    get matches() {
      return matches.map((c) => c.name);
    },
    get pointer() {
      return pointer;
    },
    filter(draft) {
      if (draft === typed) return;
      typed = draft;
      matches = commands.filter((c) => c.name.startsWith(draft));
      pointer = 0;
    },
    move(delta) {
      pointer = movePointer(pointer, delta, matches.length);
    },
    highlighted: () => matches[pointer]?.name,
    lines(width) {
      const first = Math.min(Math.max(0, pointer - VISIBLE + 1), Math.max(0, matches.length - VISIBLE));
      const shown = matches.slice(first, first + VISIBLE);
      const below = matches.length - first - shown.length;
      return [
        ...menuRows(
          shown.map((c) => ({ label: `${c.name.padEnd(NAME_COLUMN - 1)} ${c.description}` })),
          pointer - first,
          width,
        ),
        ...(below > 0 ? [`   ↓ ${below} more`] : []),
        "",
        "  ↑/↓ Navigate · enter Select · tab Complete",
      ];
    },
  };
}

/** True when the popup shows for this draft: a `/` and no whitespace after it. */
export function isSlashDraft(draft: string): boolean {
  return /^\/\S*$/.test(draft);
}
