// Rates drawn as small SVG charts over a time axis. A series is samples of a growing total: the
// hour before the page opened from the gateways' history (admin/metricsHistory, one sample per
// CONSOLE_HISTORY_INTERVAL_MS), then the console's own samples on each refresh (the ledger's
// transaction count, the subscriptions' delivered counters) or the history's newer samples; a
// rate is the difference of two samples over the time between them.
import { html } from "./html.js";

/** How far back a chart reaches: the hour the gateways keep. */
const WINDOW_MS = 3_600_000;
/** Samples per series id, oldest first: `{ at, value }`. Kept across page changes; a reload reads the history again. */
const histories = new Map();

/**
 * Puts samples from before the page's own (`past`: `{ at, value }` oldest first, e.g. from
 * admin/metricsHistory) in front of a series: only those older than its first sample.
 */
export function seed(id, past) {
  const samples = histories.get(id) ?? [];
  const first = samples[0]?.at ?? Number.POSITIVE_INFINITY;
  histories.set(id, [...past.filter((p) => p.at < first), ...samples]);
}

/**
 * Adds a sample of a growing total (one not after the series' last is ignored); answers the
 * series' rates per second between consecutive samples of the last hour as `{ at, rate }` (at:
 * the later sample's time, epoch ms). A total that went down (a restarted process counts from 0
 * again) gives no point for that step rather than a negative rate.
 */
export function record(id, value, at = Date.now()) {
  const samples = histories.get(id) ?? [];
  histories.set(id, samples);
  if (at > (samples.at(-1)?.at ?? Number.NEGATIVE_INFINITY)) samples.push({ at, value });
  while (samples.length > 2 && samples[1].at < at - WINDOW_MS) samples.shift();
  return rates(id);
}

/** The series' rates per second as `record` answers them, without adding a sample. */
export function rates(id) {
  const samples = histories.get(id) ?? [];
  const points = [];
  for (let i = 1; i < samples.length; i++) {
    const dt = (samples[i].at - samples[i - 1].at) / 1000;
    const d = samples[i].value - samples[i - 1].value;
    if (dt > 0 && d >= 0) points.push({ at: samples[i].at, rate: d / dt });
  }
  return points;
}

/** Local `HH:mm:ss` of an epoch-ms time, for the time axis. */
export function clock(ms) {
  const d = new Date(ms);
  const p = (n) => String(n).padStart(2, "0");
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** Distances between labelled times, ms: the first that gives at most `most` labels over the span is used. */
const STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600].map((s) => s * 1000);

/** Round times (multiples of a step) from `first` to `last`, epoch ms, at most `most` of them. */
export function timeTicks(first, last, most = 4) {
  if (!(last > first)) return [];
  const step = STEPS.find((s) => (last - first) / s <= most) ?? STEPS.at(-1) ?? 3_600_000;
  const ticks = [];
  for (let t = Math.ceil(first / step) * step; t <= last; t += step) ticks.push(t);
  return ticks;
}

/** A per-second value with one decimal below 10. */
const rate = (v) => v.toFixed(v < 10 ? 1 : 0);

/**
 * A small line chart of `points` ({ at, rate }) over time: x is the time axis (oldest left,
 * newest right; the two ends labelled with their clock time, round times between marked and,
 * where there is room, labelled), y the rate from 0 to the peak (labelled). The caption shows the
 * latest rate; `data-first-at` holds the oldest point's time (epoch ms).
 */
export function RateChart({ kind, label, source, points, width = 280, height = 80 }) {
  const max = Math.max(0, ...points.map((p) => p.rate));
  const top = Math.max(1, max);
  const plot = { left: 30, right: width - 4, top: 6, bottom: height - 16 };
  const first = points[0]?.at ?? 0;
  const span = Math.max(1, (points.at(-1)?.at ?? 0) - first);
  const x = (at) => (points.length < 2 ? plot.right : plot.left + ((at - first) / span) * (plot.right - plot.left));
  const y = (r) => plot.bottom - (r / top) * (plot.bottom - plot.top);
  const coords = points.map((p) => [x(p.at).toFixed(1), y(p.rate).toFixed(1)]);
  const last = points.at(-1);
  // A label is about 46 px wide (HH:mm:ss), centred on its time: kept clear of the two end labels.
  const ticks = timeTicks(first, last?.at ?? first).map((at) => ({
    at,
    x: x(at),
    labelled: x(at) - plot.left > 70 && plot.right - x(at) > 70,
  }));
  return html`
    <figure class="chart" data-testid=${`chart-${kind}`} data-first-at=${points[0]?.at ?? ""} data-points=${points.length}>
      <figcaption>
        <span>${label}</span>
        <strong>${last === undefined ? "…" : rate(last.rate)}</strong>
      </figcaption>
      <svg viewBox=${`0 0 ${width} ${height}`} width=${width} height=${height} role="img" aria-label=${label}>
        <line x1=${plot.left} y1=${plot.bottom} x2=${plot.right} y2=${plot.bottom} class="axis" />
        <line x1=${plot.left} y1=${plot.top} x2=${plot.left} y2=${plot.bottom} class="axis" />
        <text x=${plot.left - 3} y=${plot.top + 8} class="tick" text-anchor="end" data-testid="y-top">${rate(top)}</text>
        <text x=${plot.left - 3} y=${plot.bottom} class="tick" text-anchor="end">0</text>
        ${ticks.map(
          (t) => html`
            <line x1=${t.x.toFixed(1)} y1=${plot.bottom} x2=${t.x.toFixed(1)} y2=${plot.bottom + 3} class="axis" />
            ${t.labelled ? html`<text x=${t.x.toFixed(1)} y=${height - 3} class="tick" text-anchor="middle" data-testid="x-tick">${clock(t.at)}</text>` : null}
          `,
        )}
        ${
          points.length > 0
            ? html`
                <text x=${plot.left} y=${height - 3} class="tick" data-testid="x-start">${clock(first)}</text>
                <text x=${plot.right} y=${height - 3} class="tick" text-anchor="end" data-testid="x-end">${clock(last.at)}</text>
              `
            : null
        }
        ${coords.length > 1 ? html`<polyline points=${coords.map((c) => c.join(",")).join(" ")} class="line" />` : null}
        ${coords.length > 0 ? html`<circle cx=${coords.at(-1)[0]} cy=${coords.at(-1)[1]} r="3" class="dot" />` : null}
      </svg>
      <div class="chart-note muted">${source} · peak ${max.toFixed(1)}/s</div>
    </figure>
  `;
}
