/**
 * Writes docs/openapi.json from the zod contract (`npm run openapi`). A test
 * fails when the committed file and the code differ.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { buildOpenApiDocument } from "../src/server/openapi.js";

const root = new URL("../", import.meta.url);
const { version } = JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as { version: string };
writeFileSync(new URL("docs/openapi.json", root), `${JSON.stringify(buildOpenApiDocument(version), null, 2)}\n`);
process.stdout.write("wrote docs/openapi.json\n");
