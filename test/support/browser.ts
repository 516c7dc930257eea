import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";

const LOG_DIR = join(import.meta.dirname, "..", "..", ".cache", "test-logs");

/**
 * The machine's Chromium (Debian's package, installed by .ci/run), never a browser download:
 * CHROMIUM_PATH names another binary.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Nothing in the page may reach beyond the gateway: no first-run, sync or update traffic either. */
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Paths the console asks for only to learn whether the gateway has them. */
const PROBES = ["/metrics", "/openapi.html"];

export interface Browser {
  page: Page;
  context: BrowserContext;
  /** Requests the page made to any origin but the gateway's (must stay empty). */
  foreignRequests: string[];
  /** Uncaught errors and console errors of the page. */
  pageErrors: string[];
  /** Saves a screenshot of the whole page content as .cache/test-logs/<name>.png. */
  screenshot(name: string): Promise<void>;
  close(): Promise<void>;
}

/** A real headless Chromium with a fresh profile, its page pointed at nothing yet. */
export async function openBrowser(allowedOrigin: string): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: install Debian's (apt-get install chromium; .ci/run does) or set CHROMIUM_PATH`);
  }
  mkdirSync(LOG_DIR, { recursive: true });
  const profile = mkdtempSync(join(tmpdir(), "evb-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ARGS,
    viewport: { width: 1280, height: 860 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const foreignRequests: string[] = [];
  const pageErrors: string[] = [];
  page.on("request", (r) => {
    const url = new URL(r.url());
    if (url.origin !== allowedOrigin && url.protocol !== "data:") foreignRequests.push(url.href);
  });
  page.on("pageerror", (e) => pageErrors.push(e.message));
  page.on("console", (m) => {
    // The console probes what the gateway offers beyond the API; a 404 there is an answer.
    if (m.type() !== "error" || PROBES.some((p) => m.location().url === `${allowedOrigin}${p}`)) return;
    pageErrors.push(`${m.text()} (${m.location().url})`);
  });
  return {
    page,
    context,
    foreignRequests,
    pageErrors,
    async screenshot(name) {
      // The body's box: the whole content, without the empty viewport below it.
      await page.locator("body").screenshot({ path: join(LOG_DIR, `${name}.png`) });
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
