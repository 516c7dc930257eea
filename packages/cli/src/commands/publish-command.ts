import { createInterface } from "node:readline";
import type { SendResult } from "evb-client";
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

/**
 * `evb publish <topic> [content]`: the content argument is one event; without it every
 * non-empty line of standard input is one event, published one after another so that they keep
 * their order, or with `--concurrency N` up to N at once (faster; the ledger's order of those in
 * flight together is then not the lines' order). Results go to stdout (one line per event, in
 * the lines' order), progress to stderr.
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
  const lines: AsyncIterable<string> =
    single !== undefined
      ? (async function* () {
          yield single;
        })()
      : createInterface({ input: ctx.io.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  if (single === undefined && ctx.io.stdin.isTTY) ctx.err("reading events from standard input, one per line (Ctrl-D to end)");
  let sent = 0;
  let failed = 0;
  const live = ctx.io.stderr.isTTY === true;
  const report = (r: SendResult) => {
    sent++;
    if (r.status !== "SUCCESS") failed++;
    ctx.print(r, () => `${r.status} ${r.eventId ?? "-"}`);
    if (live) ctx.io.stderr.write(`\rpublished ${sent}${failed ? `, ${failed} not SUCCESS` : ""}`);
    else if (sent % 100 === 0) ctx.err(`published ${sent}`);
  };
  // In flight, oldest first: answers are reported in the lines' order.
  const window: Promise<SendResult>[] = [];
  try {
    for await (const content of lines) {
      if (single === undefined && content.trim() === "") continue;
      window.push(ctx.client.publish(topic, content, { extensions: ext, idempotencyKey }));
      if (window.length >= concurrency) report(await (window.shift() as Promise<SendResult>));
    }
    while (window.length > 0) report(await (window.shift() as Promise<SendResult>));
  } finally {
    // A failure ends the command: the answers still in flight must not surface as unhandled.
    for (const p of window) p.catch(() => {});
  }
  if (live) ctx.io.stderr.write("\n");
  ctx.err(`published ${sent} event${sent === 1 ? "" : "s"} to ${topic}${failed ? `; ${failed} not SUCCESS` : ""}`);
  return failed > 0 ? EXIT.REFUSED : EXIT.OK;
}
