/** One sample of a Prometheus text exposition. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format (what `/metrics` answers) into samples. */
export function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1] as string] = l[2] as string;
    out.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return out;
}

/** A scrape of one service: the sum of the samples of `name` whose labels include `labels` (undefined when none). */
export class Scrape {
  readonly samples: Sample[];
  readonly text: string;
  constructor(text: string) {
    this.text = text;
    this.samples = parseExposition(text);
  }

  static async of(origin: string): Promise<Scrape> {
    const res = await fetch(`${origin}/metrics`, { signal: AbortSignal.timeout(10_000) });
    if (res.status !== 200) throw new Error(`${origin}/metrics answered ${res.status}`);
    return new Scrape(await res.text());
  }

  value(name: string, labels: Record<string, string> = {}): number | undefined {
    const hits = this.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
    return hits.length === 0 ? undefined : hits.reduce((a, s) => a + s.value, 0);
  }

  /** Like value(), 0 when the series does not exist yet. */
  count(name: string, labels: Record<string, string> = {}): number {
    return this.value(name, labels) ?? 0;
  }

  names(): Set<string> {
    return new Set(this.samples.map((s) => s.name));
  }
}
