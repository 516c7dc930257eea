// The console's only way to the broker: the gateway's own HTTP interface on this origin, so the
// access settings that protect the API protect the console too. No other host is ever called.

/** A broker error (its code and message) or an HTTP failure (code "HTTP <status>"). */
export class ApiError extends Error {
  constructor(code, message) {
    super(`${message} (${code})`);
    this.code = code;
    this.brokerMessage = message;
  }
}

/**
 * A URL relative to the console's own, without the user and password a user may have typed in
 * the address bar (`http://ops:pw@host/console/`): fetch refuses URLs with credentials, and the
 * browser sends the ones it cached for this origin by itself.
 */
export function here(relative) {
  const url = new URL(relative, location.href);
  url.username = "";
  url.password = "";
  return url.href;
}

/** Which variant the console talks to, best first: M has subscriptions and admin in one envelope. */
const PREFERENCE = ["M", "E", "L"];
let configured;

/** `{ mount: {variant, path}, mounts }` from the gateway's config.json. */
export function config() {
  configured ??= fetch(here("./config.json"), { headers: { accept: "application/json" } })
    .then((r) => {
      if (!r.ok) throw new ApiError(`HTTP ${r.status}`, "config.json not served");
      return r.json();
    })
    .then(({ mounts }) => {
      const mount = PREFERENCE.map((v) => mounts.find((m) => m.variant === v)).find(Boolean);
      if (!mount) throw new ApiError("config", "no variant is mounted on this gateway");
      return { mount, mounts };
    });
  return configured;
}

/**
 * Success data out of any variant's reply: `{code: 0, message, data}` is unwrapped, any other
 * `{code, message}` is a broker error, and a reply without an envelope is the data itself
 * (M's and E's REST operations answer bare).
 */
export function unwrap(body) {
  if (body && typeof body === "object" && !Array.isArray(body) && typeof body.code === "number" && typeof body.message === "string") {
    if (body.code === 0) return body.data;
    throw new ApiError(body.code, body.message);
  }
  return body;
}

/**
 * The API key the user gave, for gateways with API_KEYS on: kept for this tab only
 * (sessionStorage) and sent as `Authorization: Bearer` with every API call. Without one, the
 * browser's own credentials (Basic) go as usual.
 */
const KEY_ITEM = "evb-console-api-key";
export const apiKey = {
  get: () => sessionStorage.getItem(KEY_ITEM),
  set: (key) => sessionStorage.setItem(KEY_ITEM, key.trim()),
  forget: () => sessionStorage.removeItem(KEY_ITEM),
};

/** Whether an error says the gateway wants credentials (an API key) that this page did not send. */
export function needsCredentials(err) {
  return err instanceof ApiError && err.code === "HTTP 401";
}

/**
 * Calls one operation of the chosen mount, e.g. `call("admin/group/general", { groupId: "1" })`.
 * @param {string} op
 * @param {Record<string, unknown>} [params]
 * @param {{ method?: "GET" | "POST", signal?: AbortSignal }} [options]
 */
export async function call(op, params = {}, { method = "GET", signal } = {}) {
  const { mount } = await config();
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) query.set(k, String(v));
  // Relative to /console/, so a proxy that serves the gateway under a prefix keeps working.
  const url = here(`..${mount.path}/${op}`);
  /** @type {Record<string, string>} */
  const headers = { accept: "application/json" };
  const key = apiKey.get();
  if (key) headers.authorization = `Bearer ${key}`;
  /** @type {RequestInit} */
  const init = { method, signal, credentials: "same-origin", headers };
  let target = url;
  if (method === "GET") target = `${url}?${query}`;
  else init.body = query;
  const res = await fetch(target, init);
  if (!res.ok) throw new ApiError(`HTTP ${res.status}`, res.statusText || "request failed");
  // subscribe answers its id as plain text; everything else is JSON.
  if (!(res.headers.get("content-type") ?? "").includes("json")) return res.text();
  return unwrap(await res.json());
}

/** Most calls one admin/batch carries (the gateway's MAX_BATCH_CALLS). */
const MAX_BATCH = 32;
/** How long reads wait for others to join their batch, ms: the pages' loads of one refresh start within it. */
const GATHER_MS = 15;
let gathering = null;

/**
 * Reads one operation through admin/batch: every read asked for within GATHER_MS goes to the
 * gateway in one request (one access-log line per refresh, not one per read), the same read
 * asked twice is sent once. Each read resolves or fails on its own, as `call` would.
 */
export function read(op, params = {}, signal) {
  const clean = {};
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) clean[k] = String(v);
  const key = JSON.stringify([op, clean]);
  if (!gathering) {
    gathering = new Map();
    setTimeout(flush, GATHER_MS);
  }
  let entry = gathering.get(key);
  if (!entry) {
    entry = { op, params: clean };
    entry.promise = new Promise((resolve, reject) => Object.assign(entry, { resolve, reject }));
    gathering.set(key, entry);
  }
  if (!signal) return entry.promise;
  // An aborted read stops waiting; the batch it joined is answered for the others.
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new DOMException("aborted", "AbortError"));
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    entry.promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function flush() {
  const entries = [...gathering.values()];
  gathering = null;
  for (let i = 0; i < entries.length; i += MAX_BATCH) {
    const part = entries.slice(i, i + MAX_BATCH);
    call("admin/batch", { calls: JSON.stringify(part.map((e) => ({ op: e.op, params: e.params }))) }, { method: "POST" }).then(
      (results) =>
        part.forEach((e, j) => {
          const r = results[j];
          if (r && r.code === 0) e.resolve(r.data);
          else if (r && typeof r.status === "number") e.reject(new ApiError(`HTTP ${r.status}`, r.message));
          else e.reject(new ApiError(r?.code ?? "batch", r?.message ?? "no answer in the batch"));
        }),
      (err) => {
        for (const e of part) e.reject(err);
      },
    );
  }
}

/** Whether an error says the gateway has no such operation (M/E: 200203, L: HTTP 404). */
export function isUnknownOperation(err) {
  return err instanceof ApiError && (err.code === 200203 || err.code === "HTTP 404");
}

/** The gateway's Prometheus text at /metrics, or null when this gateway has none. */
export async function fetchMetrics(signal) {
  const res = await fetch(here("../metrics"), { signal, credentials: "same-origin", headers: { accept: "text/plain" } });
  if (res.status === 404) return null;
  if (!res.ok) throw new ApiError(`HTTP ${res.status}`, "metrics not readable");
  return res.text();
}

/** Whether the gateway serves `path` (relative to the console), asked with a HEAD request. */
export async function serves(path) {
  try {
    return (await fetch(here(path), { method: "HEAD", credentials: "same-origin" })).ok;
  } catch {
    return false;
  }
}
