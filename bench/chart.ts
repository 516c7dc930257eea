/** An SVG bar chart of the closed-loop throughput: broker and baselines side by side per connection count, log scale. */
import type { BenchResult, System } from "./results.ts";

const COLOURS: Record<System, string> = { broker: "#1f77b4", "broker-2x2": "#17becf", "node-http": "#7f7f7f", express: "#bcbd22" };
const W = 760;
const H = 400;
const LEFT = 70;
const BOTTOM = 50;
const TOP = 40;

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export function throughputChart(r: BenchResult): string {
  const systems = (Object.keys(COLOURS) as System[]).filter((s) => r.closedLoop.some((x) => x.system === s));
  const connections = [...new Set(r.closedLoop.map((x) => x.connections))].sort((a, b) => a - b);
  const top = Math.max(10, ...r.closedLoop.map((x) => x.throughput));
  const decades = Math.ceil(Math.log10(top));
  const plotH = H - TOP - BOTTOM;
  const y = (v: number) => TOP + plotH - (Math.log10(Math.max(1, v)) / decades) * plotH;
  const group = (W - LEFT - 20) / Math.max(1, connections.length);
  const bar = (group * 0.8) / Math.max(1, systems.length);
  const title = esc(`Publishes/s, closed loop (${r.mode} mode, ${r.startedAt.slice(0, 10)}, ${r.machine.nproc} cores)`);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`,
    `<title>${title}</title>`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="18" text-anchor="middle" font-size="13">${title}</text>`,
  ];
  for (let d = 0; d <= decades; d++) {
    const yy = y(10 ** d);
    parts.push(
      `<line x1="${LEFT}" x2="${W - 20}" y1="${yy}" y2="${yy}" stroke="#ddd"/>`,
      `<text x="${LEFT - 6}" y="${yy + 4}" text-anchor="end">${(10 ** d).toLocaleString("en-US")}</text>`,
    );
  }
  connections.forEach((c, i) => {
    const x0 = LEFT + i * group + group * 0.1;
    systems.forEach((s, j) => {
      const v = r.closedLoop.find((x) => x.system === s && x.connections === c)?.throughput;
      if (v === undefined) return;
      const yy = y(v);
      parts.push(
        `<rect x="${(x0 + j * bar).toFixed(1)}" y="${yy.toFixed(1)}" width="${(bar - 2).toFixed(1)}" height="${(TOP + plotH - yy).toFixed(1)}" fill="${COLOURS[s]}"><title>${esc(`${s}, ${c} connections: ${Math.round(v)}/s`)}</title></rect>`,
      );
    });
    parts.push(`<text x="${(x0 + group * 0.4).toFixed(1)}" y="${H - BOTTOM + 16}" text-anchor="middle">${c} conn.</text>`);
  });
  systems.forEach((s, j) => {
    const x = LEFT + j * 150;
    parts.push(
      `<rect x="${x}" y="${H - 18}" width="12" height="12" fill="${COLOURS[s]}"/>`,
      `<text x="${x + 16}" y="${H - 8}">${esc(s)}</text>`,
    );
  });
  parts.push("</svg>");
  return `${parts.join("\n")}\n`;
}
