/**
 * F10: admin/listSubscription over many callback subscriptions. The subscriptions are spread
 * over several callers (source addresses 127.0.0.2, 127.0.0.3, …) so no caller reaches a
 * per-caller subscription cap, and each is removed at the end by the caller that made it.
 */
import { callFrom } from "../../test/support/http-from.ts";
import { rawCall } from "../../test/support/raw-http.ts";
import { Receiver } from "../../test/support/receiver.ts";
import { describeError } from "./probe.ts";
import { type Shape, type ShapeContext, snippet, Tally } from "./shape.ts";

const SUBSCRIBE_IN_FLIGHT = 16;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Made {
  /** The gateway's node key in listings (its INSTANCE_ADDRESS). */
  node: string;
  /** Subscription id → the source address that made it. */
  ids: Map<string, string>;
}

/** The n-th caller's source address: 127.0.0.2 upwards (127.0.0.1 is left to everyone else). */
export function callerAddress(n: number): string {
  const host = n + 2;
  return `127.0.${Math.floor(host / 256)}.${host % 256}`;
}

/** Runs `work(i)` for i in [0, n) with at most `inFlight` at once. */
async function pool(n: number, inFlight: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, inFlight) }, async () => {
      while (next < n) await work(next++);
    }),
  );
}

/** Makes the subscriptions once for all the F10 rows, and removes them at the end of the run. */
class SubscriptionFixture {
  private made: Promise<Made> | undefined;

  ensure(ctx: ShapeContext): Promise<Made> {
    this.made ??= this.make(ctx);
    return this.made;
  }

  private async make(ctx: ShapeContext): Promise<Made> {
    const { subscriptions: count, perCaller } = ctx.sizes;
    const callers = Math.ceil(count / perCaller);
    const topic = `attack.${Math.random().toString(36).slice(2, 10)}`;
    const rx = await Receiver.start();
    const ids = new Map<string, string>();
    ctx.onCleanup(() => this.remove(ctx, topic, ids, rx));
    const opened = await rawCall(ctx.url, { path: `/event-m/rest/open?topic=${topic}`, timeoutMs: ctx.sizes.hangMs });
    if (opened.json !== true) throw new Error(`GET /event-m/rest/open?topic=${topic} answered ${snippet(opened.text)}, want true`);
    ctx.say(`  subscribing ${count} callbacks to ${topic} from ${callers} callers (${callerAddress(0)}…${callerAddress(callers - 1)})`);
    await pool(count, SUBSCRIBE_IN_FLIGHT, async (i) => {
      const from = callerAddress(Math.floor(i / perCaller));
      const r = await callFrom(from, ctx.url, "/event-m/rest/subscribe", { topic, url: rx.url(`/cb/${i}`) });
      if (!UUID.test(r.text)) {
        throw new Error(
          `subscription ${i + 1} of ${count}, from ${from}, answered ${snippet(r.text)} (HTTP ${r.status}), want a subscription id`,
        );
      }
      ids.set(r.text, from);
    });
    // The node key is what the gateway calls itself; E lists every node, so find ours by one of our ids.
    const first = [...ids.keys()][0] as string;
    const all = (await rawCall(ctx.url, { path: "/event-e/admin/listSubscription", timeoutMs: 60_000 })).json as Record<string, object>;
    const node = Object.keys(all ?? {}).find((k) => first in ((all[k] ?? {}) as object));
    if (node === undefined) throw new Error(`GET /event-e/admin/listSubscription does not list subscription ${first} on any node`);
    return { node, ids };
  }

  private async remove(ctx: ShapeContext, topic: string, ids: Map<string, string>, rx: Receiver): Promise<void> {
    const failed: string[] = [];
    const entries = [...ids];
    try {
      await pool(entries.length, SUBSCRIBE_IN_FLIGHT, async (i) => {
        const [id, from] = entries[i] as [string, string];
        try {
          const r = await callFrom(from, ctx.url, "/event-m/rest/unSubscribe", { subscriptionId: id });
          if (r.json !== true) failed.push(`${id}: ${snippet(r.text)}`);
        } catch (err) {
          failed.push(`${id}: ${describeError(err)}`);
        }
      });
      await rawCall(ctx.url, { path: `/event-m/rest/close?topic=${topic}`, timeoutMs: ctx.sizes.hangMs }).catch(() => undefined);
    } finally {
      await rx.close();
    }
    if (failed.length > 0) {
      ctx.say(
        `  could not remove ${failed.length} of ${entries.length} subscriptions on ${topic} (first: ${failed[0]}); remove them with rest/unSubscribe`,
      );
    } else if (entries.length > 0) {
      ctx.say(`  removed the ${entries.length} subscriptions on ${topic}`);
    }
  }
}

type Listing = (json: unknown, node: string) => Set<string> | undefined;

/** The ids one listing shows on `node`, or undefined when its shape is not the variant's. */
const LISTINGS: Record<"M" | "L" | "E", { path: (node: string) => string; ids: Listing }> = {
  // M: {code: 0, message, data: {node: {id: record}}}
  M: {
    path: (node) => `/event-m/admin/listSubscription?nodeIp=${encodeURIComponent(node)}`,
    ids: (json, node) => {
      const j = json as { code?: unknown; data?: Record<string, unknown> } | undefined;
      const byId = j?.code === 0 ? j.data?.[node] : undefined;
      return byId && typeof byId === "object" && !Array.isArray(byId) ? new Set(Object.keys(byId)) : undefined;
    },
  },
  // L: {code: 0, message, data: {node: [record with subscribeId]}}
  L: {
    path: (node) => `/event-broker/admin/listSubscription?nodeInstances=${encodeURIComponent(node)}`,
    ids: (json, node) => {
      const j = json as { code?: unknown; data?: Record<string, unknown> } | undefined;
      const list = j?.code === 0 ? j.data?.[node] : undefined;
      return Array.isArray(list) ? new Set(list.map((r) => String((r as { subscribeId?: unknown }).subscribeId))) : undefined;
    },
  },
  // E: bare {node: {id: record}} for every node.
  E: {
    path: () => "/event-e/admin/listSubscription",
    ids: (json, node) => {
      const byId = (json as Record<string, unknown> | undefined)?.[node];
      return byId && typeof byId === "object" && !Array.isArray(byId) ? new Set(Object.keys(byId)) : undefined;
    },
  },
};

/** The F10 rows: M's listing (the finding) and L's and E's forms, over one set of subscriptions. */
export function listSubscriptionShapes(): Shape[] {
  const fixture = new SubscriptionFixture();
  return (["M", "L", "E"] as const).map((variant) => {
    const { path, ids } = LISTINGS[variant];
    return {
      name: variant === "M" ? "list-subscription-1500" : `list-subscription-1500-${variant}`,
      family: "F10",
      what: (s) => `GET ${decodeURIComponent(path("<node>"))} (${variant}) with ${s.subscriptions} callback subscriptions on the node`,
      prepare: async (ctx) => {
        await fixture.ensure(ctx);
      },
      run: async (ctx) => {
        const made = await fixture.ensure(ctx);
        const t = new Tally();
        try {
          const r = await rawCall(ctx.url, { path: path(made.node), timeoutMs: ctx.sizes.hangMs });
          const listed = r.status === 200 ? ids(r.json, made.node) : undefined;
          const missing = listed ? [...made.ids.keys()].filter((id) => !listed.has(id)).length : made.ids.size;
          if (listed === undefined) t.record(`answered HTTP ${r.status} ${snippet(r.text)}: not ${variant}'s listing of node ${made.node}`);
          else
            t.record(missing > 0 ? `${missing} of our ${made.ids.size} subscriptions missing from node ${made.node}'s listing` : undefined);
        } catch (err) {
          t.record(`no answer: ${describeError(err)}`);
        }
        return t.outcome();
      },
    };
  });
}
