/**
 * The approval page's companions, served beside it: the service worker
 * (offline shell, Web Push display, notification clicks) and the web app
 * manifest with its icon. Kept as strings so the build ships them with the
 * compiled code; the page itself stays one HTML file.
 */

/**
 * The push message the service worker shows: `title` and `body` as the
 * notification's, `url` (or `interactionId`) as where a click leads. Unknown
 * fields are ignored; a payload that is not JSON is shown as its text.
 */
export interface PagePushPayload {
  /** `interaction.pending` or `interaction.resolved` (a resolution replaces the request's notification). */
  type?: string;
  title?: string;
  body?: string;
  /** The page's deep link to the card, `…/#/interactions/<interactionId>`. */
  url?: string;
  interactionId?: string;
  conversationId?: string;
}

export const SERVICE_WORKER = `"use strict";
// agy-bridge's approval page: the shell works offline; pushes become notifications.
const CACHE = "agy-bridge-shell-v2";
const SHELL = ["/", "/manifest.webmanifest", "/icon.svg"];
const shellPath = (url) => (url.pathname === "/index.html" ? "/" : url.pathname);

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys().then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k)))).then(() => self.clients.claim()),
  );
});

self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  // Only the shell: the API (and its event streams) always go to the network.
  if (event.request.method !== "GET" || url.origin !== self.location.origin || !SHELL.includes(shellPath(url))) return;
  // Network first, so a new page arrives as soon as serve has one; the cached shell when offline.
  event.respondWith(
    fetch(event.request)
      .then((response) => {
        if (response.ok) {
          const copy = response.clone();
          event.waitUntil(caches.open(CACHE).then((cache) => cache.put(shellPath(url), copy)));
        }
        return response;
      })
      .catch(() => caches.match(shellPath(url)).then((hit) => hit || Response.error())),
  );
});

function cardUrl(data) {
  if (typeof data.url === "string") {
    try {
      const url = new URL(data.url, self.location.origin);
      // A link elsewhere is never followed from a notification: keep only its card.
      return url.origin === self.location.origin ? url.href : new URL("/" + url.hash, self.location.origin).href;
    } catch (e) { /* fall through */ }
  }
  const id = typeof data.interactionId === "string" ? data.interactionId : "";
  return new URL(id ? "/#/interactions/" + encodeURIComponent(id) : "/", self.location.origin).href;
}

self.addEventListener("push", (event) => {
  let data = {};
  if (event.data) {
    try { data = event.data.json() || {}; } catch (e) { data = { body: event.data.text() }; }
  }
  const options = {
    body: typeof data.body === "string" ? data.body : "",
    data: { url: cardUrl(data) },
    icon: "/icon.svg",
    // A request stays until it is handled; a resolution (same tag) replaces it and may go.
    requireInteraction: data.type !== "interaction.resolved",
  };
  if (typeof data.interactionId === "string") options.tag = data.interactionId;
  event.waitUntil(self.registration.showNotification(typeof data.title === "string" ? data.title : "agy is waiting for you", options));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const target = new URL((event.notification.data && event.notification.data.url) || "/", self.location.origin);
  event.waitUntil((async () => {
    const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    const open = windows.find((w) => new URL(w.url).origin === self.location.origin);
    if (open) {
      // The page opens the card itself, without a reload.
      open.postMessage({ type: "open-card", hash: target.hash });
      try { await open.focus(); } catch (e) { /* focus needs a real click */ }
      return;
    }
    await self.clients.openWindow(target.href);
  })());
});
`;

export const MANIFEST = JSON.stringify({
  name: "agy-bridge approvals",
  short_name: "agy inbox",
  description: "Approve, deny and answer what agy asks, from any device",
  start_url: "/",
  scope: "/",
  display: "standalone",
  background_color: "#f6f6f8",
  theme_color: "#1d1d21",
  icons: [{ src: "/icon.svg", sizes: "any", type: "image/svg+xml", purpose: "any" }],
});

export const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512"><rect width="512" height="512" rx="96" fill="#1d1d21"/><path d="M150 270l70 70 142-170" fill="none" stroke="#4ade80" stroke-width="48" stroke-linecap="round" stroke-linejoin="round"/></svg>`;

export interface PageAsset {
  type: string;
  body: string;
  headers?: Record<string, string>;
}

/** Served at `/<name>`, without authentication (they hold nothing secret). */
export const PAGE_ASSETS: Readonly<Record<string, PageAsset>> = {
  "sw.js": { type: "text/javascript; charset=utf-8", body: SERVICE_WORKER, headers: { "service-worker-allowed": "/" } },
  "manifest.webmanifest": { type: "application/manifest+json; charset=utf-8", body: MANIFEST },
  "icon.svg": { type: "image/svg+xml", body: ICON },
};
