import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import express from "express";
import type { Mount } from "@evb/domain";
import { consoleFiles } from "./console-files.ts";

/** Where the console lives on the gateway, outside every mount. */
export const CONSOLE_PATH = "/console";

interface Loaded {
  body: Buffer;
  contentType: string;
  etag: string;
}

/**
 * The web console: static ES modules (no build step) plus `config.json`, which tells the page
 * which variants are mounted where, so it calls the API on the same origin under the same
 * access settings as any other client. Files are read once at start; only GET and HEAD of a
 * known file answer, anything else falls through to the gateway's 404.
 */
export function consoleRouter(mounts: readonly Mount[]): express.Router {
  const files = new Map<string, Loaded>();
  const add = (urlPath: string, body: Buffer, contentType: string) =>
    files.set(urlPath, { body, contentType, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"` });
  for (const [urlPath, f] of consoleFiles()) add(urlPath, readFileSync(f.path), f.contentType);
  add(
    "config.json",
    Buffer.from(JSON.stringify({ mounts: mounts.map((m) => ({ variant: m.variant, path: m.path })) })),
    "application/json",
  );

  const csp = contentSecurityPolicy(files.get("index.html")?.body.toString("utf8") ?? "");
  const router = express.Router({ caseSensitive: true, strict: true });
  router.get(/.*/, (req, res, next) => {
    // "/console" must become "/console/", or the page's relative imports would resolve against "/".
    if (req.path === "/" && !req.originalUrl.split("?")[0]?.endsWith("/")) {
      res.redirect(301, `${CONSOLE_PATH}/`);
      return;
    }
    const file = files.get(req.path === "/" ? "index.html" : req.path.slice(1));
    if (!file) return next();
    res.setHeader("Content-Type", file.contentType);
    // Revalidate each time: a gateway upgrade must not leave a browser on old modules.
    res.setHeader("Cache-Control", "no-cache");
    res.setHeader("ETag", file.etag);
    res.setHeader("X-Content-Type-Options", "nosniff");
    // The page talks to this origin only; nothing from elsewhere loads or runs.
    res.setHeader("Content-Security-Policy", csp);
    if (req.headers["if-none-match"] === file.etag) {
      res.status(304).end();
      return;
    }
    res.setHeader("Content-Length", file.body.length);
    res.status(200).end(req.method === "HEAD" ? undefined : file.body);
  });
  return router;
}

/**
 * The page may load scripts, styles and data from this origin only. Its one inline script, the
 * import map (browsers take no import map from a file), is allowed by its hash.
 */
function contentSecurityPolicy(indexHtml: string): string {
  const importMap = /<script type="importmap">([\s\S]*?)<\/script>/.exec(indexHtml)?.[1] ?? "";
  const hash = createHash("sha256").update(importMap, "utf8").digest("base64");
  return `default-src 'self'; script-src 'self' 'sha256-${hash}'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`;
}
