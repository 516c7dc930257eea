// Rates drawn as small SVG charts. The console samples growing totals itself on each refresh
// (the ledger's transaction count, the subscriptions' delivered counters, the counters in the
// gateway's /metrics); a rate is the difference of two samples over the time between them.
import { html } from "./html.js";

/** Counter totals by family name: every sample of a `# TYPE x counter` family summed over its labels. */
export function counterTotals(text) {
  const counters = new Set();
  const totals = new Map();
  for (const line of text.split("\n")) {
    const type = /^# TYPE (\S+) counter\s*$/.exec(line);
    if (type) {
      counters.add(type[1]);
      continue;
    }
    if (line.startsWith("#") || line.trim() === "") continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    // A counter family `x` exposes its samples as `x_total` (OpenMetrics) or `x` (classic text).
    const family = counters.has(m[1]) ? m[1] : counters.has(m[1].replace(/_total$/, "")) ? m[1].replace(/_total$/, "") : null;
    const value = Number(m[3]);
    if (family && Number.isFinite(value)) totals.set(family, (totals.get(family) ?? 0) + value);
  }
  return totals;
}

const KEEP = 60;
/** Samples per series id, oldest first: `{ at, value }`. Kept across page changes (not across reloads: /metrics holds no history). */
const histories = new Map();

/**
 * Adds a sample of a growing total; answers the series' rates per second between consecutive
 * samples as `{ at, rate }` (at: the later sample's time, epoch ms). A total that went down (a
 * restarted process counts from 0 again) gives no point for that step rather than a negative rate.
 */
export function record(id, value, at = Date.now()) {
  const samples = histories.get(id) ?? [];
  histories.set(id, samples);
  samples.push({ at, value });
  if (samples.length > KEEP + 1) samples.shift();
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

/** A per-second value with one decimal below 10. */
const rate = (v) => v.toFixed(v < 10 ? 1 : 0);

/**
 * A small line chart of `points` ({ at, rate }) over time: x is the time of each sample (oldest
 * left, newest right, the two ends labelled with their clock time), y the rate from 0 to the
 * peak (labelled). The caption shows the latest rate.
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
  return html`
    <figure class="chart" data-testid=${`chart-${kind}`}>
      <figcaption>
        <span>${label}</span>
        <strong>${last === undefined ? "…" : rate(last.rate)}</strong>
      </figcaption>
      <svg viewBox=${`0 0 ${width} ${height}`} width=${width} height=${height} role="img" aria-label=${label}>
        <line x1=${plot.left} y1=${plot.bottom} x2=${plot.right} y2=${plot.bottom} class="axis" />
        <line x1=${plot.left} y1=${plot.top} x2=${plot.left} y2=${plot.bottom} class="axis" />
        <text x=${plot.left - 3} y=${plot.top + 8} class="tick" text-anchor="end" data-testid="y-top">${rate(top)}</text>
        <text x=${plot.left - 3} y=${plot.bottom} class="tick" text-anchor="end">0</text>
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
