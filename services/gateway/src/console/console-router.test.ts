import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Mount, silentLogger } from "@evb/domain";
import { accessControl } from "../http/access-control.ts";
import { buildApp } from "../http/app.ts";
import { consoleFiles } from "./console-files.ts";

const MOUNTS: Mount[] = [
  { variant: "L", path: "/event-broker" },
  { variant: "M", path: "/event-m" },
];

/** A gateway app with no operations, over a real socket on 127.0.0.1. */
async function serve(basicUsers: ReadonlyMap<string, string> = new Map()): Promise<{ base: string; server: Server }> {
  const app = buildApp({
    mounts: MOUNTS,
    operations: [],
    logger: silentLogger,
    bodyLimitBytes: 65_536,
    trustedProxies: ["loopback"],
    access: accessControl({ allowed: [], basicUsers, logger: silentLogger }),
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe("console route", () => {
  let base: string;
  let server: Server;
  beforeAll(async () => ({ base, server } = await serve()));
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("serves the page at /console/ and sends /console there", async () => {
    const bare = await fetch(`${base}/console`, { redirect: "manual" });
    expect(bare.status).toBe(301);
    expect(bare.headers.get("location")).toBe("/console/");
    const page = await fetch(`${base}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await page.text()).toContain('<script type="module" src="app.js">');
  });

  it("answers modules, styles and the vendored libraries with their MIME types", async () => {
    for (const [path, type] of [
      ["app.js", "text/javascript; charset=utf-8"],
      ["pages/overview.js", "text/javascript; charset=utf-8"],
      ["style.css", "text/css; charset=utf-8"],
      ["vendor/preact.mjs", "text/javascript; charset=utf-8"],
      ["vendor/preact-hooks.mjs", "text/javascript; charset=utf-8"],
      ["vendor/htm.mjs", "text/javascript; charset=utf-8"],
    ]) {
      const res = await fetch(`${base}/console/${path}`);
      expect([path, res.status, res.headers.get("content-type")]).toEqual([path, 200, type]);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    }
  });

  it("tells the page which variants are mounted where", async () => {
    const res = await fetch(`${base}/console/config.json`);
    expect(await res.json()).toEqual({ mounts: MOUNTS });
  });

  it("allows the page's import map by its hash and nothing from another origin", async () => {
    const res = await fetch(`${base}/console/`);
    const html = await res.text();
    const map = /<script type="importmap">([\s\S]*?)<\/script>/.exec(html)?.[1] as string;
    const hash = createHash("sha256").update(map).digest("base64");
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain(`script-src 'self' 'sha256-${hash}'`);
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/https?:/);
  });

  it("revalidates by ETag", async () => {
    const first = await fetch(`${base}/console/app.js`);
    const etag = first.headers.get("etag") as string;
    expect(first.headers.get("cache-control")).toBe("no-cache");
    const again = await fetch(`${base}/console/app.js`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
  });

  it("answers an unknown file, a path outside the folder and a POST with the gateway's 404", async () => {
    for (const [method, path] of [
      ["GET", "/console/nope.js"],
      ["GET", "/console/%2e%2e/package.json"],
      ["GET", "/console/..%2fconsole-router.ts"],
      ["GET", "/console/vendor/"],
      ["POST", "/console/"],
    ] as const) {
      const res = await fetch(`${base}${path}`, { method });
      expect([path, res.status]).toEqual([path, 404]);
      expect(((await res.json()) as { status: number }).status).toBe(404);
    }
  });

  it("is behind the API's Basic authentication when that is on", async () => {
    const guarded = await serve(new Map([["ops", "s3cret"]]));
    try {
      expect((await fetch(`${guarded.base}/console/`)).status).toBe(401);
      expect((await fetch(`${guarded.base}/console/vendor/preact.mjs`)).status).toBe(401);
      const auth = { authorization: `Basic ${Buffer.from("ops:s3cret").toString("base64")}` };
      expect((await fetch(`${guarded.base}/console/`, { headers: auth })).status).toBe(200);
    } finally {
      await new Promise<void>((resolve) => guarded.server.close(() => resolve()));
    }
  });
});

describe("console files", () => {
  const files = consoleFiles();
  const importMap = JSON.parse(
    /<script type="importmap">([\s\S]*?)<\/script>/.exec(readFileSync(join(import.meta.dirname, "static", "index.html"), "utf8"))?.[1] ??
      "{}",
  ) as { imports: Record<string, string> };

  it("every import of every console module names a file the route serves", () => {
    const missing: string[] = [];
    for (const [urlPath, file] of files) {
      if (!urlPath.endsWith(".js") && !urlPath.endsWith(".mjs")) continue;
      const source = readFileSync(file.path, "utf8");
      for (const m of source.matchAll(/(?:import|export)\s*(?:[^"';]*?\sfrom\s*)?["']([^"']+)["']/g)) {
        const spec = m[1] as string;
        const target = spec.startsWith(".")
          ? new URL(spec, `http://x/console/${urlPath}`).pathname.slice("/console/".length)
          : importMap.imports[spec]?.slice(2);
        if (!target || !files.has(target)) missing.push(`${urlPath} → ${spec}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
