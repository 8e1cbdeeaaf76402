/** Wrapping as agy draws it: prose at word boundaries, option labels and commands by characters. */

/** Word-wraps one paragraph to `width` columns; continuation rows start with `indent`. */
export function wordWrap(line: string, width: number, indent = ""): string[] {
  const chars = Array.from(line);
  if (chars.length <= width) return [line];
  const out: string[] = [];
  let rest = chars;
  let prefix = "";
  while (rest.length > 0) {
    const room = Math.max(1, width - Array.from(prefix).length);
    if (rest.length <= room) {
      out.push(prefix + rest.join(""));
      break;
    }
    let cut = rest.lastIndexOf(" ", room);
    if (cut <= 0) cut = room;
    out.push(prefix + rest.slice(0, cut).join("").trimEnd());
    rest = rest.slice(cut);
    while (rest[0] === " ") rest = rest.slice(1);
    prefix = indent;
  }
  return out;
}

/** Cuts `line` into rows of `width` characters; continuation rows start at column 0. */
export function hardWrap(line: string, width: number): string[] {
  const chars = Array.from(line);
  if (chars.length <= width) return [line];
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += width) out.push(chars.slice(i, i + width).join(""));
  return out;
}

/** A prefixed block of text: the prefix on the first row, `indent` on every later row and paragraph. */
export function prefixedBlock(prefix: string, text: string, width: number, indent: string): string[] {
  return text.split("\n").flatMap((line, i) => wordWrap(`${i === 0 ? prefix : indent}${line}`, width, indent));
}
