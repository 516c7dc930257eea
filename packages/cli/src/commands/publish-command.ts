import { createInterface } from "node:readline";
import type { BatchItemResult } from "evb-client";
import type { CliContext } from "../cli-context.ts";
import { EXIT, UsageError } from "../exit-codes.ts";

function extensions(ctx: CliContext): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of ctx.flags.ext ?? []) {
    const eq = e.indexOf("=");
    const key = eq < 0 ? e : e.slice(0, eq);
    if (!key.startsWith("event-")) throw new UsageError(`--ext ${e}: extension keys start with event- (e.g. event-format=json)`);
    out[key] = eq < 0 ? "" : e.slice(eq + 1);
  }
  return out;
}

/** Most publishes `--concurrency` may keep in flight. */
const MAX_CONCURRENCY = 256;

/** Most events one `--batch` may carry: the broker's cap per rest/publishBatch. */
const MAX_BATCH = 1000;

/** Standard input's non-empty lines, `size` at a time (the last batch may be short). */
async function* batchesOf(lines: AsyncIterable<string>, size: number): AsyncIterable<string[]> {
  let batch: string[] = [];
  for await (const line of lines) {
    if (line.trim() === "") continue;
    batch.push(line);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** One result line: `STATUS eventId`, or `ERROR code message` for an event the broker refused alone (a batch). */
function resultLine(r: BatchItemResult): string {
  return "code" in r ? `ERROR ${r.code} ${r.message ?? ""}`.trimEnd() : `${r.status} ${r.eventId ?? "-"}`;
}

/**
 * `evb publish <topic> [content]`: the content argument is one event; without it every
 * non-empty line of standard input is one event, published one after another so that they keep
 * their order, or with `--concurrency N` up to N at once (faster; the ledger's order of those in
 * flight together is then not the lines' order). Results go to stdout (one line per event, in
 * the lines' order), progress to stderr.
 * `--batch N` sends standard input's lines N to a request (rest/publishBatch: far fewer round
 * trips), each batch's events appended in the lines' order, one result line per event.
 * `--idempotency-key` names the one event of a content argument, so that running the same command
 * again after a TIMEOUT or a lost reply stores nothing twice; refused with standard input, where
 * one key for several events would make every event after the first a 100211.
 */
export async function publishCommand(ctx: CliContext): Promise<number> {
  const topic = ctx.arg(0, "topic");
  const ext = extensions(ctx);
  const single = ctx.args[1];
  const idempotencyKey = ctx.flags["idempotency-key"];
  if (idempotencyKey !== undefined && single === undefined) {
    throw new UsageError("--idempotency-key names one event: give the content as an argument, not on standard input");
  }
  const concurrency = ctx.flags.concurrency === undefined ? 1 : ctx.int("concurrency", ctx.flags.concurrency, 1);
  if (concurrency > MAX_CONCURRENCY) throw new UsageError(`--concurrency must be at most ${MAX_CONCURRENCY}, not ${concurrency}`);
  const batch = ctx.flags.batch === undefined ? 1 : ctx.int("batch", ctx.flags.batch, 1);
  if (batch > MAX_BATCH) throw new UsageError(`--batch must be at most ${MAX_BATCH}, not ${batch}`);
  if (ctx.flags.batch !== undefined && single !== undefined)
    throw new UsageError("--batch reads events from standard input: give no content");
  const chunks: AsyncIterable<string[]> =
    single !== undefined
      ? (async function* () {
          yield [single];
        })()
      : batchesOf(createInterface({ input: ctx.io.stdin, crlfDelay: Number.POSITIVE_INFINITY }), batch);
  if (single === undefined && ctx.io.stdin.isTTY) ctx.err("reading events from standard input, one per line (Ctrl-D to end)");
  let sent = 0;
  let failed = 0;
  const live = ctx.io.stderr.isTTY === true;
  const report = (results: BatchItemResult[]) => {
    for (const r of results) {
      sent++;
      if ("code" in r || r.status !== "SUCCESS") failed++;
      ctx.print(r, () => resultLine(r));
      if (live) ctx.io.stderr.write(`\rpublished ${sent}${failed ? `, ${failed} not SUCCESS` : ""}`);
      else if (sent % 100 === 0) ctx.err(`published ${sent}`);
    }
  };
  const send = (contents: string[]): Promise<BatchItemResult[]> =>
    ctx.flags.batch === undefined
      ? ctx.client.publish(topic, contents[0] as string, { extensions: ext, idempotencyKey }).then((r) => [r])
      : ctx.client.publishMany(contents.map((content) => ({ topic, content, extensions: ext })));
  // In flight, oldest first: answers are reported in the lines' order.
  const window: Promise<BatchItemResult[]>[] = [];
  try {
    for await (const contents of chunks) {
      window.push(send(contents));
      if (window.length >= concurrency) report(await (window.shift() as Promise<BatchItemResult[]>));
    }
    while (window.length > 0) report(await (window.shift() as Promise<BatchItemResult[]>));
  } finally {
    // A failure ends the command: the answers still in flight must not surface as unhandled.
    for (const p of window) p.catch(() => {});
  }
  if (live) ctx.io.stderr.write("\n");
  ctx.err(`published ${sent} event${sent === 1 ? "" : "s"} to ${topic}${failed ? `; ${failed} not SUCCESS` : ""}`);
  return failed > 0 ? EXIT.REFUSED : EXIT.OK;
}
