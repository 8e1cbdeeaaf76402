/**
 * The loader hooks of record-modules.mjs: each resolved module URL is
 * appended to the file given at registration, synchronously, so a process
 * that exits at once loses none.
 */
import { appendFileSync } from "node:fs";

let file = "";

export function initialize(data) {
  file = data.file;
}

export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  appendFileSync(file, `${result.url}\n`);
  return result;
}
