/**
 * Renders the Grafana dashboard (deploy/monitoring/grafana/dashboards/event-broker.json) from
 * real scrapes, where no Grafana or Prometheus runs: it scrapes every service's /metrics a few
 * times, evaluates each panel's PromQL over those scrapes (scripts/dashboard/promql.ts, the
 * subset the dashboard uses) and draws the same panels to an SVG, and to a PNG with headless
 * Chromium when one is installed.
 *
 *   node scripts/render-dashboard.ts --targets gateway-1=http://127.0.0.1:8080/metrics,indexer-1=http://127.0.0.1:8180/metrics,…
 *   node scripts/render-dashboard.ts --demo      # starts an isolated broker and a mixed load first
 *
 * Options: --scrapes N (default 12), --interval-ms MS (default 5000), --out FILE.svg
 * (default docs/images/dashboard.svg; the PNG goes beside it).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { startBenchStack, startBenchSystem } from "../bench/bench-system.ts";
import { parseExposition } from "../test/support/scrape.ts";
import type { Scrape } from "./dashboard/promql.ts";
import { type Panel, renderSvg } from "./dashboard/render-svg.ts";

const ROOT = join(import.meta.dirname, "..");
const { values: args } = parseArgs({
  options: {
    targets: { type: "string" },
    demo: { type: "boolean", default: false },
    scrapes: { type: "string", default: "12" },
    "interval-ms": { type: "string", default: "5000" },
    out: { type: "string", default: join(ROOT, "docs", "images", "dashboard.svg") },
  },
});
const dashboard = JSON.parse(readFileSync(join(ROOT, "deploy/monitoring/grafana/dashboards/event-broker.json"), "utf8")) as {
  title: string;
  panels: Panel[];
};

async function scrapeOnce(targets: { name: string; url: string }[], history: Scrape[]): Promise<void> {
  const t = Date.now() / 1000;
  await Promise.all(
    targets.map(async ({ url }) => {
      const text = await (await fetch(url, { signal: AbortSignal.timeout(10_000) })).text();
      const instance = new URL(url).host;
      history.push({ t, samples: parseExposition(text).map((s) => ({ ...s, labels: { ...s.labels, instance } })) });
    }),
  );
}

/** A mixed load for --demo: a healthy receiver, a flaky one (every 4th answer 503), one that answers 410 Gone. */
async function demo(run: (targets: { name: string; url: string }[]) => Promise<void>): Promise<void> {
  let n = 0;
  const rx = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      n++;
      if (req.url === "/gone") res.writeHead(410).end("gone");
      else if (req.url === "/flaky" && n % 4 === 0) res.writeHead(503).end("busy");
      else setTimeout(() => res.writeHead(200).end("ok"), 2 + (n % 10));
    });
  });
  await new Promise<void>((r) => rx.listen(0, "127.0.0.1", r));
  const hook = (p: string) => `http://127.0.0.1:${(rx.address() as AddressInfo).port}${p}`;
  const stack = await startBenchStack();
  const sys = await startBenchSystem(stack, {
    gateways: 1,
    indexers: 1,
    notifiers: 1,
    env: {
      CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8",
      METRICS_POLL_MS: "1000",
      RETRY_BASE_MS: "500",
      RETRY_MAX_MS: "2000",
      NOTIFIER_POLL_MS: "200",
    },
  });
  const m = `${sys.origins[0]}/event-m`;
  let stop = false;
  try {
    for (const t of ["orders/eu", "orders/us", "audit"]) await fetch(`${m}/rest/open?topic=${encodeURIComponent(t)}`);
    for (const [topic, path] of [
      ["orders/#", "/ok"],
      ["orders/#", "/ok2"],
      ["orders/eu", "/flaky"],
      ["audit", "/gone"],
    ] as const)
      await fetch(`${m}/rest/subscribe`, { method: "POST", body: new URLSearchParams({ topic, url: hook(path) }) });
    const load = Promise.all(
      Array.from({ length: 4 }, async (_, w) => {
        for (let i = 0; !stop; i++) {
          const topic = ["orders/eu", "orders/us", "audit"][(i + w) % 3] as string;
          await fetch(`${m}/rest/publish`, { method: "POST", body: new URLSearchParams({ topic, content: `event ${w}-${i}` }) }).catch(
            () => {},
          );
          await new Promise((r) => setTimeout(r, 5 + ((i * 7) % 40)));
        }
      }),
    );
    await run(sys.metrics);
    stop = true;
    await load;
  } finally {
    await sys.stop();
    await sys.dropData((m) => process.stderr.write(`${m}\n`));
    await stack.stop();
    rx.close();
  }
}

async function main(): Promise<void> {
  const history: Scrape[] = [];
  const scrapes = Number(args.scrapes);
  const interval = Number(args["interval-ms"]);
  const collect = async (targets: { name: string; url: string }[]) => {
    for (let i = 0; i < scrapes; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, interval));
      await scrapeOnce(targets, history);
      process.stderr.write(`scrape ${i + 1}/${scrapes}\n`);
    }
  };
  let source: string;
  if (args.demo) {
    await demo(collect);
    source = "an isolated broker (1 gateway, 1 indexer, 1 notifier) under a mixed publish load with healthy, flaky and 410 receivers";
  } else {
    if (!args.targets) throw new Error("give --targets name=url,… or --demo");
    const targets = args.targets.split(",").map((p) => {
      const [name, url] = p.split("=") as [string, string];
      return { name, url };
    });
    await collect(targets);
    source = targets.map((t) => t.name).join(", ");
  }
  const subtitle = `Rendered by scripts/render-dashboard.ts from ${scrapes} scrapes ${interval / 1000} s apart of ${source}, ${new Date().toISOString().slice(0, 16)}Z (not Grafana: the same panels and queries, evaluated offline).`;
  const svg = renderSvg(dashboard.title, dashboard.panels, history, subtitle);
  mkdirSync(dirname(args.out), { recursive: true });
  writeFileSync(args.out, svg);
  process.stderr.write(`wrote ${args.out}\n`);
  const chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));
  if (chromium) {
    const png = args.out.replace(/\.svg$/, ".png");
    const [w, h] = [/width="(\d+)"/.exec(svg)?.[1] ?? "1500", /height="(\d+)"/.exec(svg)?.[1] ?? "1200"];
    execFileSync(
      chromium,
      ["--headless", "--no-sandbox", "--disable-gpu", `--screenshot=${png}`, `--window-size=${w},${h}`, `file://${args.out}`],
      {
        stdio: "ignore",
      },
    );
    process.stderr.write(`wrote ${png}\n`);
  }
}

await main();
