import { parseArgs } from "node:util";

export interface AttackOptions {
  /** The gateway's origin, no trailing slash. */
  url: string;
  /** Smaller sizes, so a test can run every shape in a few seconds. */
  quick: boolean;
  /** Exit 1 when a shape is over the loop-delay goal, not only when it is answered wrongly. */
  strict: boolean;
  /** Names of the shapes to run, in run order; every shape when --shape is not given. */
  shapes: string[];
}

/** A command line we cannot run: the message says what to type instead. */
export class UsageError extends Error {}

export const DEFAULT_URL = "http://127.0.0.1:8080";

/**
 * Reads `npm run attack -- [--url U] [--quick] [--strict] [--shape NAME]...`. A --shape may name
 * one shape or a family (F3 runs every F3 shape); `known` lists the shapes in run order, each
 * with its family.
 */
export function parseAttackArgs(argv: readonly string[], known: readonly { name: string; family: string }[]): AttackOptions {
  let values: { url?: string; quick?: boolean; strict?: boolean; shape?: string[] };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        url: { type: "string" },
        quick: { type: "boolean" },
        strict: { type: "boolean" },
        shape: { type: "string", multiple: true },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}; usage: npm run attack -- [--url ${DEFAULT_URL}] [--quick] [--strict] [--shape NAME]`);
  }

  const raw = values.url ?? DEFAULT_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--url must be the gateway's address such as ${DEFAULT_URL}, got "${raw}"`);
  }
  if (url.protocol !== "http:") throw new UsageError(`--url must be an http:// address (the probe speaks plain HTTP/1.1), got "${raw}"`);
  if (url.pathname !== "/" || url.search !== "") {
    throw new UsageError(`--url is the gateway's origin without a path (the shapes add /event-m/... themselves), got "${raw}"`);
  }

  const wanted = values.shape ?? [];
  const shapes: string[] = [];
  for (const w of wanted.flatMap((s) => s.split(",")).map((s) => s.trim())) {
    const hits = known.filter((k) => k.name === w || k.family.toLowerCase() === w.toLowerCase());
    if (hits.length === 0) {
      throw new UsageError(`no shape "${w}"; the shapes are: ${known.map((k) => `${k.family} ${k.name}`).join(", ")}`);
    }
    for (const h of hits) if (!shapes.includes(h.name)) shapes.push(h.name);
  }
  // Run order stays the table's order whatever order the names came in.
  const order = known.map((k) => k.name);
  shapes.sort((a, b) => order.indexOf(a) - order.indexOf(b));
  return { url: url.origin, quick: values.quick ?? false, strict: values.strict ?? false, shapes };
}
