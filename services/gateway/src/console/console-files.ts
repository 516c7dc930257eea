import { readdirSync } from "node:fs";
import { extname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** One file the console serves: where it is on disk and the Content-Type it goes out with. */
export interface ConsoleFile {
  path: string;
  contentType: string;
}

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

/**
 * The browser modules the console imports by bare name (its import map in index.html names
 * them), served from the installed npm packages as they ship: no bundling, no copy in the repo.
 */
const VENDOR_MODULES: Record<string, string> = {
  "vendor/preact.mjs": "preact",
  "vendor/preact-hooks.mjs": "preact/hooks",
  "vendor/htm.mjs": "htm",
};

/** The Content-Type for a file name, or undefined for a kind the console does not serve. */
function contentTypeOf(name: string): string | undefined {
  return CONTENT_TYPES[extname(name).toLowerCase()];
}

/**
 * Every file under `/console/`, keyed by its URL path below it ("index.html", "pages/topics.js",
 * "vendor/preact.mjs"). The table is fixed at start: a request can only ever name one of these
 * files, so no path from the URL reaches the file system.
 */
export function consoleFiles(staticDir: string = join(import.meta.dirname, "static")): Map<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  for (const entry of readdirSync(staticDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath, entry.name);
    const contentType = contentTypeOf(entry.name);
    if (contentType) files.set(relative(staticDir, full).split(sep).join("/"), { path: full, contentType });
  }
  for (const [urlPath, specifier] of Object.entries(VENDOR_MODULES)) {
    files.set(urlPath, { path: fileURLToPath(import.meta.resolve(specifier)), contentType: CONTENT_TYPES[".mjs"] as string });
  }
  return files;
}
