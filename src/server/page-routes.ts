/**
 * The approval page and its assets: public, like any web page, and locked
 * down by headers (a strict CSP, no referrer, no sniffing).
 */
import type { ServerResponse } from "node:http";
import type { PageAsset } from "./page-assets.js";

export function sendPage(res: ServerResponse, page: string): void {
  res.writeHead(200, {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-store",
    "content-security-policy":
      "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; worker-src 'self'; manifest-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
  });
  res.end(page);
}

export function sendAsset(res: ServerResponse, asset: PageAsset): void {
  res.writeHead(200, { "content-type": asset.type, "cache-control": "no-cache", "x-content-type-options": "nosniff", ...asset.headers });
  res.end(asset.body);
}
