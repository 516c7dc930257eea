/**
 * A small PromQL evaluator for the subset the dashboard uses, so its panels can be drawn from a
 * few scrapes where no Prometheus runs (scripts/render-dashboard.ts). Supported: selectors with
 * =, !=, =~, !~ matchers; rate() and increase() over a range; sum/max/min [by (…)];
 * histogram_quantile(). Anything else is a parse error, so a dashboard query outside the subset
 * is caught by test/deployment/monitoring.test.ts rather than drawn wrong.
 */

export type Labels = Record<string, string>;
/** One scrape of one target: when (seconds) and its samples (with an `instance` label). */
export interface Scrape {
  t: number;
  samples: { name: string; labels: Labels; value: number }[];
}
export interface Point {
  labels: Labels;
  value: number;
}

type Matcher = { label: string; op: "=" | "!=" | "=~" | "!~"; value: string };
export type Expr =
  | { kind: "selector"; name: string; matchers: Matcher[]; rangeS?: number }
  | { kind: "call"; fn: "rate" | "increase"; arg: Expr }
  | { kind: "quantile"; q: number; arg: Expr }
  | { kind: "agg"; op: "sum" | "max" | "min"; by: string[]; arg: Expr };

const TOKEN = /\s*(?:([A-Za-z_:][A-Za-z0-9_:]*)|(\d+(?:\.\d+)?[smhd]?)|("(?:[^"\\]|\\.)*")|(=~|!~|!=|=|[(){}[\],]))/y;

/** Parses `text`; throws naming the position when it is outside the supported subset. */
export function parse(text: string): Expr {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.trimEnd().length) {
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(text);
    if (!m) throw new Error(`cannot read ${JSON.stringify(text.slice(at))}`);
    tokens.push(m[0].trim());
  }
  let i = 0;
  const peek = () => tokens[i];
  const take = (want?: string) => {
    const t = tokens[i++];
    if (t === undefined || (want !== undefined && t !== want)) throw new Error(`expected ${want ?? "more"} at token ${i} of ${text}`);
    return t;
  };
  const duration = (t: string) => {
    const m = /^(\d+)([smhd])$/.exec(t);
    if (!m) throw new Error(`not a duration: ${t}`);
    return Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[m[2] as "s"];
  };
  const expr = (): Expr => {
    const word = take();
    if (word === "rate" || word === "increase") {
      take("(");
      const arg = expr();
      take(")");
      if (arg.kind !== "selector" || arg.rangeS === undefined) throw new Error(`${word}() needs a range selector`);
      return { kind: "call", fn: word, arg };
    }
    if (word === "histogram_quantile") {
      take("(");
      const q = Number(take());
      take(",");
      const arg = expr();
      take(")");
      return { kind: "quantile", q, arg };
    }
    if (word === "sum" || word === "max" || word === "min") {
      const by: string[] = [];
      if (peek() === "by") {
        take("by");
        take("(");
        while (peek() !== ")") {
          by.push(take());
          if (peek() === ",") take(",");
        }
        take(")");
      }
      take("(");
      const arg = expr();
      take(")");
      return { kind: "agg", op: word, by, arg };
    }
    if (!/^[A-Za-z_:]/.test(word)) throw new Error(`unexpected ${word} in ${text}`);
    const matchers: Matcher[] = [];
    if (peek() === "{") {
      take("{");
      while (peek() !== "}") {
        const label = take();
        const op = take() as Matcher["op"];
        if (!["=", "!=", "=~", "!~"].includes(op)) throw new Error(`bad matcher ${op}`);
        matchers.push({ label, op, value: JSON.parse(take()) as string });
        if (peek() === ",") take(",");
      }
      take("}");
    }
    let rangeS: number | undefined;
    if (peek() === "[") {
      take("[");
      rangeS = duration(take());
      take("]");
    }
    return { kind: "selector", name: word, matchers, rangeS };
  };
  const e = expr();
  if (i !== tokens.length) throw new Error(`unexpected ${tokens[i]} in ${text}`);
  return e;
}

/** Metric names an expression reads. */
export function metricNames(e: Expr): string[] {
  return e.kind === "selector" ? [e.name] : metricNames(e.arg);
}

const key = (l: Labels) =>
  Object.keys(l)
    .sort()
    .map((k) => `${k}=${l[k]}`)
    .join(",");

function matches(l: Labels, ms: Matcher[]): boolean {
  return ms.every((m) => {
    const v = l[m.label] ?? "";
    if (m.op === "=") return v === m.value;
    if (m.op === "!=") return v !== m.value;
    const re = new RegExp(`^(?:${m.value})$`);
    return m.op === "=~" ? re.test(v) : !re.test(v);
  });
}

/** Evaluates `e` at time `t` over `history` (every scrape of every target, any order). */
export function evaluate(e: Expr, history: readonly Scrape[], t: number): Point[] {
  if (e.kind === "selector") {
    // The newest scrape at or before t of each target.
    const latest = new Map<string, Scrape>();
    for (const s of history) {
      const inst = s.samples[0]?.labels.instance ?? "";
      const cur = latest.get(inst);
      if (s.t <= t && (!cur || s.t > cur.t)) latest.set(inst, s);
    }
    return [...latest.values()].flatMap((s) =>
      s.samples.filter((x) => x.name === e.name && matches(x.labels, e.matchers)).map((x) => ({ labels: x.labels, value: x.value })),
    );
  }
  if (e.kind === "call") {
    const sel = e.arg as Extract<Expr, { kind: "selector" }>;
    const window = history.filter((s) => s.t <= t && s.t > t - (sel.rangeS as number)).sort((a, b) => a.t - b.t);
    const series = new Map<string, { labels: Labels; first: [number, number]; last: [number, number] }>();
    for (const s of window)
      for (const x of s.samples) {
        if (x.name !== sel.name || !matches(x.labels, sel.matchers)) continue;
        const k = key(x.labels);
        const cur = series.get(k);
        if (!cur) series.set(k, { labels: x.labels, first: [s.t, x.value], last: [s.t, x.value] });
        else cur.last = [s.t, x.value];
      }
    const out: Point[] = [];
    for (const s of series.values()) {
      const dt = s.last[0] - s.first[0];
      if (dt <= 0) continue;
      const inc = Math.max(0, s.last[1] - s.first[1]);
      out.push({ labels: s.labels, value: e.fn === "rate" ? inc / dt : inc });
    }
    return out;
  }
  if (e.kind === "agg") {
    const groups = new Map<string, Point>();
    for (const p of evaluate(e.arg, history, t)) {
      const labels: Labels = {};
      for (const b of e.by) if (p.labels[b] !== undefined) labels[b] = p.labels[b] as string;
      const k = key(labels);
      const cur = groups.get(k);
      if (!cur) groups.set(k, { labels, value: p.value });
      else cur.value = e.op === "sum" ? cur.value + p.value : e.op === "max" ? Math.max(cur.value, p.value) : Math.min(cur.value, p.value);
    }
    return [...groups.values()];
  }
  // histogram_quantile: per group of the non-`le` labels, interpolate inside the bucket that holds rank q.
  const groups = new Map<string, { labels: Labels; buckets: [number, number][] }>();
  for (const p of evaluate(e.arg, history, t)) {
    const { le, ...rest } = p.labels;
    if (le === undefined) continue;
    const k = key(rest);
    const g = groups.get(k) ?? { labels: rest, buckets: [] };
    g.buckets.push([le === "+Inf" ? Number.POSITIVE_INFINITY : Number(le), p.value]);
    groups.set(k, g);
  }
  const out: Point[] = [];
  for (const g of groups.values()) {
    const b = g.buckets.sort((x, y) => x[0] - y[0]);
    const total = b[b.length - 1]?.[1] ?? 0;
    if (total <= 0) continue;
    const rank = e.q * total;
    let prevLe = 0;
    let prevCount = 0;
    for (const [le, count] of b) {
      if (count >= rank) {
        const upper = Number.isFinite(le) ? le : prevLe;
        const value = count === prevCount ? upper : prevLe + ((upper - prevLe) * (rank - prevCount)) / (count - prevCount);
        out.push({ labels: g.labels, value });
        break;
      }
      prevLe = le;
      prevCount = count;
    }
  }
  return out;
}

/** Fills `{{label}}` in a legend format. */
export function legend(format: string, labels: Labels): string {
  return format.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, l: string) => labels[l] ?? "");
}
