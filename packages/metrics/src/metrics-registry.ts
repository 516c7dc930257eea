import type { IncomingMessage, ServerResponse } from "node:http";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/**
 * Every metric this broker exports starts with this prefix, so one Prometheus selector
 * (`{__name__=~"evb_.*"}`) finds them all and none collides with another exporter's.
 */
export const METRIC_PREFIX = "evb_";

/**
 * Buckets (seconds) for request and delivery durations: from a millisecond to the longest
 * callback or publish timeout a deployment sets (120 s).
 */
export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120];

/**
 * Buckets (seconds) for end-to-end delivery latency (sealed → 2xx), which includes retries:
 * from 10 ms to a day.
 */
export const LATENCY_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400];

/**
 * One service's metrics: a private registry (never prom-client's global one, so tests can run
 * several in one process), labelled with the service name, with Node's process and event-loop
 * metrics. Label values must come from bounded sets (groups, variants, result codes): never a
 * subscription id, URL or topic, which would grow the series without bound.
 */
export class ServiceMetrics {
  readonly registry = new Registry();

  constructor(service: string) {
    this.registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: this.registry, prefix: METRIC_PREFIX });
  }

  counter<L extends string>(name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
    return new Counter({ name: METRIC_PREFIX + name, help, labelNames, registers: [this.registry] });
  }

  gauge<L extends string>(name: string, help: string, labelNames: readonly L[] = [], collect?: (g: Gauge<L>) => void): Gauge<L> {
    return new Gauge({
      name: METRIC_PREFIX + name,
      help,
      labelNames,
      registers: [this.registry],
      ...(collect
        ? {
            collect() {
              collect(this);
            },
          }
        : {}),
    });
  }

  histogram<L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]): Histogram<L> {
    return new Histogram({ name: METRIC_PREFIX + name, help, labelNames, buckets, registers: [this.registry] });
  }

  /** Names of every metric registered (with the prefix), e.g. to check a dashboard against them. */
  names(): string[] {
    return this.registry.getMetricsAsArray().map((m) => m.name);
  }

  /** `GET /metrics`: the Prometheus text exposition of this registry. */
  readonly handler = async (_req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      const text = await this.registry.metrics();
      res.writeHead(200, { "content-type": this.registry.contentType }).end(text);
    } catch (err) {
      res.writeHead(500, { "content-type": "text/plain" }).end(`metrics collection failed: ${String(err)}\n`);
    }
  };
}

/** The status class label of an HTTP status ("2xx" … "5xx"), or "none" when no status came back. */
export function statusClass(status: number | null | undefined): string {
  if (status === null || status === undefined || status < 100 || status > 599) return "none";
  return `${Math.floor(status / 100)}xx`;
}
