/** JSON-RPC request shapes (docs/jsonrpc.md, Limits): bodies whose parse is costly, and a flood of notification batches. */
import { rawCall } from "../../test/support/raw-http.ts";
import { describeError } from "./probe.ts";
import { type Shape, type ShapeContext, snippet, Tally } from "./shape.ts";

const JSONRPC = "/event-m/jsonrpc";

/** One POST to the JSON-RPC endpoint whose answer must be HTTP `status` with `want` as its body (a JSON-RPC error code, or an empty body). */
async function postRpc(ctx: ShapeContext, body: string, status: number, want: number | "empty") {
  const t = new Tally();
  try {
    const r = await rawCall(ctx.url, { method: "POST", path: JSONRPC, body, timeoutMs: ctx.sizes.hangMs });
    const code = (r.json as { error?: { code?: unknown } } | undefined)?.error?.code;
    const right = r.status === status && (want === "empty" ? r.text === "" : code === want);
    t.record(
      right
        ? undefined
        : `answered HTTP ${r.status} ${snippet(r.text)}: want ${status} and ${want === "empty" ? "no body" : `error ${want}`}`,
    );
  } catch (err) {
    t.record(`no answer: ${describeError(err)}`);
  }
  return t.outcome();
}

/** A batch of `n` calls of rest/exist's method, as notifications (no id) when asked. */
function existBatch(n: number, notifications = false): string {
  return JSON.stringify(
    Array.from({ length: n }, (_, i) => ({
      jsonrpc: "2.0",
      ...(notifications ? {} : { id: i }),
      method: "exist",
      params: [`attack.absent${i}`],
    })),
  );
}

/** The full sizes' batch: the brief's 10,000 calls (about 700 KB, within the 1 MiB body); --quick: 1,000. */
const batchCalls = (formBytes: number) => (formBytes >= 1024 * 1024 ? 10_000 : 1_000);

const batch: Shape = {
  name: "jsonrpc-batch-10000",
  family: "F2",
  what: (s) => `POST ${JSONRPC} a batch of ${batchCalls(s.formBytes)} calls (refused past 100, before any is parsed)`,
  run: (ctx) => postRpc(ctx, existBatch(batchCalls(ctx.sizes.formBytes)), 400, -32600),
};

const deep: Shape = {
  name: "jsonrpc-deep-1MiB",
  family: "F2",
  what: (s) => `POST ${JSONRPC} ${Math.round(s.formBytes / 1024)} KiB of '[' (refused past 32 levels, before JSON.parse)`,
  run: (ctx) => postRpc(ctx, "[".repeat(ctx.sizes.formBytes), 400, -32600),
};

const notifications: Shape = {
  name: "jsonrpc-notification-flood",
  family: "F4",
  what: (s) => `${s.connections} POST ${JSONRPC} at once, each a batch of 100 notifications (answered empty once they ran)`,
  run: async (ctx) => {
    const body = existBatch(100, true);
    const outcomes = await Promise.all(Array.from({ length: ctx.sizes.connections }, () => postRpc(ctx, body, 200, "empty")));
    const t = new Tally();
    for (const o of outcomes) t.record(o.problems[0]);
    return t.outcome();
  },
};

/**
 * rest/publishBatch at its cap: 1,000 events (MAX_BATCH_EVENTS), each as large as the body limit
 * allows, with a 64-character topic, extensions and content, so that every check of every event
 * runs; each carries an idempotency key with a space, the last check before the topic's existence,
 * so nothing is stored and every event must answer 100210 in a 200 array.
 */
function maximalBatch(formBytes: number): string {
  const per = Math.floor((formBytes * 0.9) / 1000);
  const topic = `attack/${"t".repeat(57)}`.slice(0, Math.max(8, Math.min(64, per - 120)));
  const ext = "e".repeat(Math.max(0, Math.min(900, Math.floor((per - 140) / 2))));
  const content = "c".repeat(Math.max(1, per - 140 - topic.length - ext.length));
  const event = { topic, content, extensions: { "event-x": ext }, idempotencyKey: "bad key" };
  return JSON.stringify({ events: Array.from({ length: 1000 }, () => event) });
}

const publishBatchMax: Shape = {
  name: "publish-batch-max",
  family: "F2",
  what: (s) =>
    `POST /event-m/rest/publishBatch 1,000 maximal events in ${Math.round((s.formBytes * 0.9) / 1024)} KiB (each answered 100210)`,
  run: async (ctx) => {
    const t = new Tally();
    const body = maximalBatch(ctx.sizes.formBytes);
    try {
      const r = await rawCall(ctx.url, {
        method: "POST",
        path: "/event-m/rest/publishBatch",
        headers: { "content-type": "application/json" },
        body,
        timeoutMs: ctx.sizes.hangMs,
      });
      const items = Array.isArray(r.json) ? (r.json as { code?: unknown }[]) : [];
      const right = r.status === 200 && items.length === 1000 && items.every((i) => i.code === 100210);
      t.record(right ? undefined : `answered HTTP ${r.status} ${snippet(r.text)}: want 200 and 1,000 results of 100210`);
    } catch (err) {
      t.record(`no answer: ${describeError(err)}`);
    }
    return t.outcome();
  },
};

export const JSONRPC_SHAPES: readonly Shape[] = [batch, deep, notifications, publishBatchMax];
