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
/** Samples per series id, oldest first: `{ at, value }`. Kept across page changes. */
const histories = new Map();

/**
 * Adds a sample of a growing total; answers the series' rates per second between consecutive
 * samples. A total that went down (a restarted process counts from 0 again) gives no point for
 * that step rather than a negative rate.
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
    if (dt > 0 && d >= 0) points.push(d / dt);
  }
  return points;
}

/** A small line chart of `points` (newest right), with the latest value as its caption. */
export function RateChart({ kind, label, source, points, width = 280, height = 64 }) {
  const max = Math.max(0, ...points);
  const top = Math.max(1, max);
  const step = (width - 8) / Math.max(1, KEEP - 1);
  const x0 = width - 4 - (points.length - 1) * step; // room for the newest dot
  const coords = points.map((p, i) => `${(x0 + i * step).toFixed(1)},${(height - 4 - (p / top) * (height - 8)).toFixed(1)}`);
  const last = points.at(-1);
  return html`
    <figure class="chart" data-testid=${`chart-${kind}`}>
      <figcaption>
        <span>${label}</span>
        <strong>${last === undefined ? "…" : last.toFixed(last < 10 ? 1 : 0)}</strong>
      </figcaption>
      <svg viewBox=${`0 0 ${width} ${height}`} width=${width} height=${height} role="img" aria-label=${label}>
        <line x1="0" y1=${height - 1} x2=${width} y2=${height - 1} class="axis" />
        ${coords.length > 1 ? html`<polyline points=${coords.join(" ")} class="line" />` : null}
        ${coords.length > 0 ? html`<circle cx=${coords.at(-1).split(",")[0]} cy=${coords.at(-1).split(",")[1]} r="3" class="dot" />` : null}
      </svg>
      <div class="chart-note muted">${source} · peak ${max.toFixed(1)}/s</div>
    </figure>
  `;
}
