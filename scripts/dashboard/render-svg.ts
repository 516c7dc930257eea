import { evaluate, legend, parse, type Scrape } from "./promql.ts";

export interface Panel {
  type: string;
  title: string;
  fieldConfig?: { defaults?: { unit?: string } };
  targets?: { expr: string; legendFormat: string }[];
}

const COLORS = ["#73bf69", "#f2cc0c", "#5794f2", "#ff780a", "#f2495c", "#b877d9", "#8ab8ff", "#fade2a"];
const W = 360;
const H = 210;
const COLS = 4;

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** A value in the panel's unit, short. */
function fmt(v: number, unit: string): string {
  if (unit === "percentunit") return `${(v * 100).toFixed(0)}%`;
  if (unit === "bytes") return v >= 1 << 30 ? `${(v / 2 ** 30).toFixed(1)} GiB` : `${(v / 2 ** 20).toFixed(0)} MiB`;
  if (unit === "s") return v >= 1 ? `${v.toFixed(1)} s` : `${(v * 1000).toFixed(v < 0.01 ? 1 : 0)} ms`;
  const n = Math.abs(v) >= 1000 ? `${(v / 1000).toFixed(1)}k` : Number.isInteger(v) ? String(v) : v.toFixed(v < 10 ? 2 : 1);
  return unit === "reqps" ? `${n}/s` : n;
}

/** One time-series panel at (px, y): its queries evaluated at every scrape time, drawn as lines with a legend. */
function renderPanel(p: Panel, history: readonly Scrape[], times: readonly number[], px: number, y: number): string[] {
  const parts: string[] = [];
  const t0 = times[0] ?? 0;
  const t1 = times[times.length - 1] ?? 1;
  const unit = p.fieldConfig?.defaults?.unit ?? "short";
  const series = new Map<string, [number, number][]>();
  for (const target of p.targets ?? []) {
    const e = parse(target.expr);
    for (const t of times)
      for (const pt of evaluate(e, history, t)) {
        const name = legend(target.legendFormat, pt.labels) || target.expr;
        series.set(name, [...(series.get(name) ?? []), [t, pt.value]]);
      }
  }
  const max = Math.max(1e-9, ...[...series.values()].flatMap((s) => s.map(([, v]) => (Number.isFinite(v) ? v : 0))));
  const plot = { x: px + 52, y: y + 28, w: W - 64, h: H - 80 };
  parts.push(`<rect x="${px}" y="${y}" width="${W}" height="${H}" class="panel"/>`);
  parts.push(`<text x="${px + 10}" y="${y + 18}" class="title">${esc(p.title)}</text>`);
  for (const f of [0, 0.5, 1]) {
    const gy = plot.y + plot.h - f * plot.h;
    parts.push(`<line x1="${plot.x}" x2="${plot.x + plot.w}" y1="${gy}" y2="${gy}" class="grid"/>`);
    parts.push(`<text x="${plot.x - 6}" y="${gy + 4}" class="axis" text-anchor="end">${esc(fmt(max * f, unit))}</text>`);
  }
  let i = 0;
  for (const [name, pts] of series) {
    const color = COLORS[i % COLORS.length];
    const path = pts
      .filter(([, v]) => Number.isFinite(v))
      .map(
        ([t, v]) =>
          `${(plot.x + ((t - t0) / Math.max(t1 - t0, 1e-9)) * plot.w).toFixed(1)},${(plot.y + plot.h - (v / max) * plot.h).toFixed(1)}`,
      )
      .join(" ");
    parts.push(`<polyline points="${path}" fill="none" stroke="${color}" stroke-width="2"/>`);
    if (i < 6) {
      const lx = px + 10 + (i % 2) * (W / 2 - 5);
      const ly = y + H - 36 + Math.floor(i / 2) * 13;
      const last = pts[pts.length - 1]?.[1] ?? 0;
      parts.push(`<rect x="${lx}" y="${ly - 8}" width="10" height="3" fill="${color}"/>`);
      parts.push(`<text x="${lx + 14}" y="${ly}" class="legend">${esc(`${name.slice(0, 26)}: ${fmt(last, unit)}`)}</text>`);
    }
    i++;
  }
  if (series.size === 0)
    parts.push(`<text x="${plot.x + plot.w / 2}" y="${plot.y + plot.h / 2}" class="axis" text-anchor="middle">no data</text>`);
  return parts;
}

/**
 * Draws the dashboard's panels (rows as headings, time series as lines) from `history`, evaluating
 * each query at every scrape time as Grafana would ask Prometheus for it.
 */
export function renderSvg(title: string, panels: readonly Panel[], history: readonly Scrape[], subtitle: string): string {
  const times = [...new Set(history.map((s) => s.t))].sort((a, b) => a - b).slice(1);
  const parts: string[] = [];
  let x = 0;
  let y = 70;
  for (const p of panels) {
    if (p.type === "row") {
      if (x !== 0) y += H + 10;
      x = 0;
      parts.push(`<text x="12" y="${y + 18}" class="row">${esc(p.title)}</text>`);
      y += 28;
      continue;
    }
    parts.push(...renderPanel(p, history, times, 12 + x * (W + 10), y));
    x++;
    if (x >= COLS) {
      x = 0;
      y += H + 10;
    }
  }
  const height = y + (x === 0 ? 0 : H + 10) + 10;
  const width = 12 + COLS * (W + 10);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">
<title>${esc(title)} dashboard</title>
<style>
  svg { background: #111217; font-family: Inter, Helvetica, Arial, sans-serif; }
  .panel { fill: #181b1f; stroke: #2c3235; }
  .title { fill: #ccccdc; font-size: 13px; font-weight: 600; }
  .row { fill: #ccccdc; font-size: 15px; font-weight: 600; }
  .axis { fill: #8e8e9e; font-size: 10px; }
  .legend { fill: #ccccdc; font-size: 10px; }
  .grid { stroke: #2c3235; }
  .h1 { fill: #ffffff; font-size: 20px; font-weight: 600; }
  .sub { fill: #8e8e9e; font-size: 12px; }
</style>
<rect width="100%" height="100%" fill="#111217"/>
<text x="12" y="30" class="h1">${esc(title)}</text>
<text x="12" y="52" class="sub">${esc(subtitle)}</text>
${parts.join("\n")}
</svg>
`;
}
