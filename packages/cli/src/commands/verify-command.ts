import { readFileSync } from "node:fs";
import { verifyWebhook } from "evb-client";
import type { CliContext } from "../cli-context.ts";
import { EXIT, UsageError } from "../exit-codes.ts";

/** Headers from `name: value` lines (as `evb listen --save` writes them, or curl -D) or a JSON object. */
export function parseHeaderText(text: string): Record<string, string> {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) return JSON.parse(trimmed) as Record<string, string>;
  const out: Record<string, string> = {};
  for (const line of trimmed.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon > 0) out[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return out;
}

function readFile(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new UsageError(`cannot read ${what} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/**
 * `evb verify --secret S --body FILE (--headers FILE | -H 'webhook-id: …' …) [--tolerance SEC]`:
 * checks a saved callback's Standard Webhooks signature. Exit 0 when valid, 1 when not.
 */
export async function verifyCommand(ctx: CliContext): Promise<number> {
  const secrets = ctx.flags.secret ?? [];
  if (secrets.length === 0) throw new UsageError("verify needs --secret (whsec_… as given to the broker's WEBHOOK_SECRETS)");
  if (!ctx.flags.body) throw new UsageError("verify needs --body <file> (the raw callback body)");
  const body = readFile(ctx.flags.body, "body");
  const headers = ctx.flags.headers ? parseHeaderText(readFile(ctx.flags.headers, "headers").toString("utf8")) : {};
  for (const h of ctx.flags.header ?? []) Object.assign(headers, parseHeaderText(h));
  const toleranceSec = ctx.flags.tolerance === undefined ? undefined : ctx.int("tolerance", ctx.flags.tolerance);
  const r = verifyWebhook({ secret: secrets, headers, body: new Uint8Array(body), toleranceSec });
  if (r.ok) {
    ctx.print(
      { valid: true, id: r.id, timestamp: r.timestampSec },
      () => `valid: ${r.id} signed at ${new Date(r.timestampSec * 1000).toISOString()}`,
    );
    return EXIT.OK;
  }
  ctx.print({ valid: false, reason: r.reason }, () => `INVALID: ${r.reason}`);
  return EXIT.REFUSED;
}
