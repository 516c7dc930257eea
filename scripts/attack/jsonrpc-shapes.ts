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

export const JSONRPC_SHAPES: readonly Shape[] = [batch, deep, notifications];
