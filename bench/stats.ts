/** Latency figures as the bench reports them, in milliseconds. */
export interface Latency {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** The p-th percentile (0–100) of ascending numbers: the smallest value with at least p % at or below it. */
export function percentileOf(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] as number;
}

/** p50/p90/p99/max of unsorted samples. */
export function latencyOf(samples: readonly number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    p50: percentileOf(sorted, 50),
    p90: percentileOf(sorted, 90),
    p99: percentileOf(sorted, 99),
    max: sorted.length ? (sorted[sorted.length - 1] as number) : 0,
  };
}

/**
 * One latency distribution summarised as its quantiles at evenly spaced points (`q[i]` is the
 * (i+1)/q.length quantile) plus the number of samples behind it. Two generators against two
 * gateways each report one; `mergeQuantiles` combines them without the raw samples.
 */
export interface QuantileSketch {
  count: number;
  q: number[];
}

/** The p50/p90/p99/max of several sketches taken together, each weighted by its sample count. */
export function mergeQuantiles(sketches: readonly QuantileSketch[]): Latency {
  const points: Array<{ v: number; w: number }> = [];
  for (const s of sketches) {
    if (s.count === 0 || s.q.length === 0) continue;
    for (const v of s.q) points.push({ v, w: s.count / s.q.length });
  }
  if (points.length === 0) return { p50: 0, p90: 0, p99: 0, max: 0 };
  points.sort((a, b) => a.v - b.v);
  const total = points.reduce((t, p) => t + p.w, 0);
  const at = (p: number): number => {
    const want = (p / 100) * total;
    let seen = 0;
    for (const point of points) {
      seen += point.w;
      if (seen >= want - 1e-9) return point.v;
    }
    return (points[points.length - 1] as { v: number }).v;
  };
  return { p50: at(50), p90: at(90), p99: at(99), max: (points[points.length - 1] as { v: number }).v };
}

/** broker ÷ baseline, or null when there is no baseline figure to divide by. */
export function ratio(broker: number, baseline: number | undefined): number | null {
  if (baseline === undefined || !Number.isFinite(baseline) || baseline <= 0) return null;
  return broker / baseline;
}

/** A ratio as the tables print it: `0.104` → `10.4 %`. */
export function formatRatio(r: number | null): string {
  return r === null ? "–" : `${(r * 100).toFixed(r < 0.1 ? 2 : 1)} %`;
}

/** "notifier-1 0.210, gateway-1 0.090": CPU ms per unit of work by service, as the tables and progress lines print it. */
export function cpuList(perService: Record<string, number> | undefined): string {
  return Object.entries(perService ?? {})
    .map(([name, ms]) => `${name} ${ms.toFixed(3)}`)
    .join(", ");
}
