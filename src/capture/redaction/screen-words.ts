/**
 * The words of agy's own screen furniture (spike-notes §13): footers, dialog
 * headers and options, mode placeholders, the status row, tool rows, model
 * labels, the survey and the slash popup. A redacted screen keeps these and
 * masks every other word, so it reads to the same screen model (the reader
 * decides on these words and on layout, which masking keeps) while nothing a
 * person or the model wrote survives. A prompt that happens to use one of
 * these words keeps that word on screen: the words are agy's, not secrets.
 */
const FURNITURE = `
? for shortcuts esc to cancel Generating Working Thinking Thought tokens ctrl o expand
Command Create file Edit Write Delete Read List Bash Shell RunCommand Question Subagent Ask Search Web Fetch Task Tool
Requesting permission for Do you want to proceed Run this command Allow creation of this file reading
Yes and always allow in conversation commands that start with Persist settings json No deny
User declined the tool call dismissed question Interrupted Exited model
Navigate tab Amend g edit Review f full diff enter Confirm Select Continue Cancel Go Back Keyboard Effort Switch current
Accessing workspace trust contents project I folder exit
Plan mode research plan only shift cycle Accept edits auto approved accept default
Pasted text lines more hidden
Good Fine Bad Skip feedback How is agy doing session optional
clear help quit status statusline usage add dir compact resume init memory mcp permissions login logout theme
Start a new Switch the Show available Exit not
agy simulated by bridge RPC TLS plain https http localhost
Gemini Flash Pro Lite Claude Sonnet Opus Haiku GPT OSS Thinking Auto Fast
tell Antigravity CLI what to do next Submit run command expand task s Press up down to queued messages
general shortcuts cycle Keyboard Shortcuts keybindings customize Clear screen Cycle Move View Close d l a p y n
Your browser should open automatically If Click here authenticate Without redirect paste the authorization code below
Welcome You are currently signed in login method Google OAuth Use Cloud project
Terms of Service Data Use Agents on your machine review they before allow it Previous Done Toggle
agree help improve allowing collection usage data as terms describe
Action required left new open approve reject Preview editor Approve all artifacts artifact
`;

const WORDS = new Set(
  FURNITURE.split(/[^\p{L}\p{N}_]+/u)
    .filter((w) => w !== "")
    .map((w) => w.toLowerCase()),
);

/** Effort names, which the status row cuts short (`· hig`, `(Mediu`). */
const EFFORTS = ["minimal", "low", "medium", "high", "xhigh", "max"];

/** True for a word agy's screen furniture uses (case-insensitive), a cut-off effort name, or a short number (option numbers, versions, counts). */
export function isFurnitureWord(word: string): boolean {
  const lower = word.toLowerCase();
  if (WORDS.has(lower)) return true;
  if (/^[0-9]{1,3}$/.test(word)) return true;
  return lower.length >= 3 && EFFORTS.some((effort) => effort.startsWith(lower));
}
