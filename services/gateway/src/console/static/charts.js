// Publish and delivery rates from the gateway's Prometheus text (/metrics), drawn as small SVG
// charts. The console samples the counters itself on each refresh; the rate is the difference of
// two samples over the time between them.
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

/** The rates the console charts: the shortest counter name with each word (fewest qualifiers). */
export const SERIES = [
  { id: "publish", label: "Events published / s", match: /publish/ },
  { id: "delivery", label: "Callbacks delivered / s", match: /deliver|callback|notif/ },
];

function pick(totals, match) {
  const names = [...totals.keys()].filter((n) => match.test(n) && !/fail|error|reject|retr|dead/.test(n));
  names.sort((a, b) => a.length - b.length || a.localeCompare(b));
  return names[0];
}

const KEEP = 60;
const history = []; // { at, totals }, oldest first, kept across page changes

/** Adds one sample; answers per series `{ name, points: [rate per second…] }` (null name: no such counter). */
export function sample(text, at = Date.now()) {
  const totals = counterTotals(text);
  history.push({ at, totals });
  if (history.length > KEEP + 1) history.shift();
  return SERIES.map((s) => {
    const name = pick(totals, s.match);
    const points = [];
    for (let i = 1; i < history.length && name; i++) {
      const prev = history[i - 1];
      const cur = history[i];
      const dt = (cur.at - prev.at) / 1000;
      const d = (cur.totals.get(name) ?? 0) - (prev.totals.get(name) ?? 0);
      // A restarted process starts its counters again from 0: skip that step rather than plot a drop.
      if (dt > 0 && d >= 0) points.push(d / dt);
    }
    return { ...s, name, points };
  });
}

/** A small line chart of `points` (newest right), with the latest value as its caption. */
export function RateChart({ label, name, points, width = 280, height = 64 }) {
  if (!name) return null;
  const max = Math.max(1, ...points);
  const step = width / Math.max(1, KEEP - 1);
  const x0 = width - (points.length - 1) * step;
  const coords = points.map((p, i) => `${(x0 + i * step).toFixed(1)},${(height - 2 - (p / max) * (height - 6)).toFixed(1)}`);
  const last = points.at(-1);
  return html`
    <figure class="chart" data-testid=${`chart-${name}`}>
      <figcaption>
        <span>${label}</span>
        <strong>${last === undefined ? "…" : last.toFixed(last < 10 ? 1 : 0)}</strong>
      </figcaption>
      <svg viewBox=${`0 0 ${width} ${height}`} width=${width} height=${height} role="img" aria-label=${`${label}, ${name}`}>
        <line x1="0" y1=${height - 1} x2=${width} y2=${height - 1} class="axis" />
        ${coords.length > 1 ? html`<polyline points=${coords.join(" ")} class="line" />` : null}
      </svg>
      <div class="chart-note muted">${name} · max ${max.toFixed(1)}/s</div>
    </figure>
  `;
}
