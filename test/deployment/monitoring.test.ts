import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { evaluate, metricNames, parse } from "../../scripts/dashboard/promql.ts";
import { GatewayMetrics } from "../../services/gateway/src/observability/gateway-metrics.ts";
import { IndexerMetrics } from "../../services/indexer/src/indexer-metrics.ts";
import { NotifierMetrics } from "../../services/notifier/src/notifier-metrics.ts";
import { readCompose } from "./compose-fixture.ts";
import { composeEnv } from "./compose-model.ts";

// No Docker engine runs here: the monitoring profile is checked statically, against the
// metrics the services really register.
const ROOT = join(import.meta.dirname, "..", "..");
const read = (f: string) => readFileSync(join(ROOT, f), "utf8");
interface DatasourceRef {
  type: string;
  uid: string;
}
const dashboardText = read("deploy/monitoring/grafana/dashboards/event-broker.json");
const dashboard = JSON.parse(dashboardText) as {
  __inputs?: { name: string; type: string; pluginId: string }[];
  templating: { list: { name: string; type: string; query: string; current?: { value: string } }[] };
  panels: {
    type: string;
    title: string;
    datasource?: DatasourceRef;
    targets?: { expr: string; legendFormat: string; datasource?: DatasourceRef }[];
  }[];
};
const alerts = parseYaml(read("deploy/monitoring/alerts.yml")) as { groups: { rules: { alert: string; expr: string }[] }[] };
const compose = readCompose();

/** Every metric name some service exports, with the series names a histogram adds. */
function exported(): Set<string> {
  const names = [
    ...new GatewayMetrics({ waiting: () => 0, cap: () => 1 }).metrics.names(),
    ...(() => {
      const indexer = new IndexerMetrics(["1"]);
      indexer.watchRefusals(() => new Map());
      return indexer.metrics.names();
    })(),
    ...new NotifierMetrics().metrics.names(),
  ];
  return new Set(names.flatMap((n) => [n, `${n}_bucket`, `${n}_sum`, `${n}_count`]));
}

const panelQueries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
const alertQueries = alerts.groups.flatMap((g) => g.rules.map((r) => ({ alert: r.alert, expr: r.expr })));

describe("monitoring profile", () => {
  it("every metric the dashboard and the alert rules query is exported by some service", () => {
    const have = exported();
    const queried = [...panelQueries, ...alertQueries].flatMap((q) => [...q.expr.matchAll(/\bevb_[a-z0-9_]+/g)].map((m) => m[0]));
    expect(queried.length).toBeGreaterThan(20);
    expect([...new Set(queried.filter((n) => !have.has(n)))]).toEqual([]);
  });

  it("knows when a queried metric is not exported", () => {
    const have = exported();
    expect(have.has("evb_delivery_attempts_total")).toBe(true);
    expect(have.has("evb_delivery_attempt_total")).toBe(false);
  });

  it("every dashboard query is in the subset the offline renderer evaluates", () => {
    for (const p of dashboard.panels.filter((x) => x.type !== "row"))
      for (const t of p.targets ?? [])
        expect(
          metricNames(parse(t.expr)).every((n) => n.startsWith("evb_")),
          t.expr,
        ).toBe(true);
  });

  it("imports into an existing Grafana: no panel or target names a fixed datasource uid, all go through the datasource variable", () => {
    const refs = dashboard.panels
      .filter((p) => p.type !== "row")
      .flatMap((p) => [
        { where: p.title, ref: p.datasource },
        ...(p.targets ?? []).map((t) => ({ where: `${p.title}: ${t.expr}`, ref: t.datasource })),
      ]);
    expect(refs.length).toBeGreaterThan(30);
    for (const { where, ref } of refs) expect(ref, where).toEqual({ type: "prometheus", uid: `\${datasource}` });
    // Nor anywhere else (an annotation, a link): the provisioned uid would not exist elsewhere.
    expect(dashboardText).not.toContain("evb-prometheus");
  });

  it("declares its Prometheus as an import input, which the datasource variable defaults to", () => {
    expect(dashboard.__inputs).toEqual([expect.objectContaining({ name: "DS_PROMETHEUS", type: "datasource", pluginId: "prometheus" })]);
    const variable = dashboard.templating.list.find((v) => v.name === "datasource");
    expect(variable).toMatchObject({ type: "datasource", query: "prometheus", current: { value: `\${DS_PROMETHEUS}` } });
  });

  it("in the repository's own Grafana the datasource variable can only pick the provisioned Prometheus", () => {
    // Provisioning leaves ${DS_PROMETHEUS} unresolved, and Grafana then picks a datasource of the
    // variable's type: with one Prometheus provisioned, that one.
    const provisioned = (
      parseYaml(read("deploy/monitoring/grafana/provisioning/datasources/prometheus.yml")) as {
        datasources: { type: string; url: string }[];
      }
    ).datasources;
    expect(provisioned.filter((d) => d.type === "prometheus")).toEqual([expect.objectContaining({ url: "http://prometheus:9090" })]);
  });

  it("the dashboard covers publish, sealing, delivery and each service instance", () => {
    const all = panelQueries.map((q) => q.expr).join("\n");
    for (const m of [
      "evb_publish_total",
      "evb_publish_duration_seconds_bucket",
      "evb_indexer_events_sealed_total",
      "evb_indexer_lag_records",
      "evb_delivery_attempts_total",
      "evb_delivery_latency_seconds_bucket",
      "evb_delivery_backlog_oldest_age_seconds",
      "evb_subscriptions_dead_lettered",
    ])
      expect(all).toContain(m);
    expect(all).toMatch(/by \(service, instance\)/);
  });

  it("Prometheus scrapes every gateway, indexer and notifier of the compose file on its metrics port", () => {
    const prom = parseYaml(read("deploy/monitoring/prometheus.yml")) as {
      scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
      rule_files: string[];
    };
    const targets = prom.scrape_configs.flatMap((c) => c.static_configs.flatMap((s) => s.targets)).sort();
    const expected = Object.entries(compose.services)
      .filter(([, s]) => s.image === "event-broker:local")
      .map(([name, s]) => {
        const env = composeEnv(s);
        return `${name}:${name.startsWith("gateway") ? env.PORT : env.HEALTH_PORT}`;
      })
      .sort();
    expect(expected.length).toBeGreaterThanOrEqual(6);
    expect(targets).toEqual(expected);
    expect(prom.rule_files).toEqual(["/etc/prometheus/alerts.yml"]);
  });

  it("Prometheus and Grafana run only in the monitoring profile, from official images, with the files they mount present", () => {
    for (const name of ["prometheus", "grafana"]) {
      const svc = compose.services[name] as { image?: string; profiles?: string[]; volumes?: string[] };
      expect(svc.profiles, name).toEqual(["monitoring"]);
      expect(svc.image, name).toMatch(/^(prom\/prometheus|grafana\/grafana):v?\d+\.\d+\.\d+$/);
      for (const v of svc.volumes ?? []) {
        const src = v.split(":")[0] as string;
        if (src.startsWith("./")) expect(existsSync(join(ROOT, src)), v).toBe(true);
      }
    }
    const broker = Object.entries(compose.services).filter(([, s]) => s.image === "event-broker:local");
    for (const [name, s] of broker) expect((s as { profiles?: string[] }).profiles, name).toBeUndefined();
  });
});

describe("the offline PromQL subset (scripts/render-dashboard.ts)", () => {
  const scrape = (t: number, instance: string, samples: [string, Record<string, string>, number][]) => ({
    t,
    samples: samples.map(([name, labels, value]) => ({ name, labels: { ...labels, instance }, value })),
  });
  const history = [
    scrape(0, "a", [
      ["evb_x_total", { group: "1" }, 0],
      ["evb_h_bucket", { le: "0.1" }, 0],
      ["evb_h_bucket", { le: "1" }, 0],
      ["evb_h_bucket", { le: "+Inf" }, 0],
    ]),
    scrape(0, "b", [["evb_x_total", { group: "1" }, 10]]),
    scrape(10, "a", [
      ["evb_x_total", { group: "1" }, 50],
      ["evb_h_bucket", { le: "0.1" }, 50],
      ["evb_h_bucket", { le: "1" }, 100],
      ["evb_h_bucket", { le: "+Inf" }, 100],
    ]),
    scrape(10, "b", [["evb_x_total", { group: "1" }, 30]]),
  ];
  it("sums per-instance rates by label", () => {
    expect(evaluate(parse("sum by (group) (rate(evb_x_total[1m]))"), history, 10)).toEqual([{ labels: { group: "1" }, value: 7 }]);
    expect(evaluate(parse('max(evb_x_total{group="1"})'), history, 10)).toEqual([{ labels: {}, value: 50 }]);
  });
  it("interpolates quantiles inside the bucket that holds them", () => {
    const q = (x: number) => evaluate(parse(`histogram_quantile(${x}, sum by (le) (rate(evb_h_bucket[5m])))`), history, 10)[0]?.value;
    expect(q(0.5)).toBeCloseTo(0.1);
    expect(q(0.75)).toBeCloseTo(0.55);
  });
  it("refuses what it does not evaluate", () => {
    expect(() => parse("sum(rate(evb_x_total[1m])) / 2")).toThrow();
    expect(() => parse("avg(evb_x_total)")).toThrow();
  });
});
