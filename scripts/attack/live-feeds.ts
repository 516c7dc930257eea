/**
 * F11 and F12 (issue 28): STOMP and MQTT subscriptions that used to cost the gateway per pattern.
 * F11 sends one SUBSCRIBE whose destination lists 12,000 `+` patterns, read from OFFSET_FIRST over
 * a topic of 200 events (of two levels: no `+` takes it, so each event meets every pattern); F12 holds 5 MQTT connections (5 callers) of 1,000 filters that match
 * nothing while blocks are sealed. Both time getEvent meanwhile: a loop held or a Postgres pool
 * drained shows there as well as in the loop delay.
 */
import { connect, type MqttClient } from "mqtt";
import { rawCall } from "../../test/support/raw-http.ts";
import { frame, RawStomp } from "../../test/support/stomp.ts";
import { describeError, sleep } from "./probe.ts";
import { type Shape, type ShapeContext, snippet, Tally } from "./shape.ts";
import { callerAddress } from "./subscriptions.ts";

const L = "/event-broker";
/** Sizes of the findings; --quick takes a tenth. */
const PATTERNS = 12_000;
const EVENTS = 200;
const MQTT_CONNECTIONS = 5;
const MQTT_FILTERS = 1_000;
/** Blocks sealed while the idle filters are held. */
const BLOCKS = 20;
/** A getEvent slower than this while the shape runs is a starved answer. */
const GET_EVENT_BOUND_MS = 500;

const scale = (ctx: ShapeContext, n: number) => (ctx.sizes.hangMs < 10_000 ? Math.ceil(n / 10) : n);

async function publish(ctx: ShapeContext, topic: string, content: string): Promise<string> {
  const r = await rawCall(ctx.url, { path: `${L}/rest/publish?topic=${topic}&content=${content}`, timeoutMs: ctx.sizes.hangMs });
  const id = (r.json as { eventId?: unknown } | undefined)?.eventId;
  if (typeof id !== "string") throw new Error(`publish on ${topic} answered ${snippet(r.text)}, want an eventId`);
  return id;
}

async function openTopic(ctx: ShapeContext, prefix: string): Promise<string> {
  const topic = `${prefix}/${Math.random().toString(36).slice(2, 10)}`;
  const r = await rawCall(ctx.url, { path: `${L}/rest/open?topic=${topic}`, timeoutMs: ctx.sizes.hangMs });
  if ((r.json as { code?: unknown } | undefined)?.code !== 0) throw new Error(`open ${topic} answered ${snippet(r.text)}`);
  return topic;
}

/** getEvent of one event, over and over until stopped: each answer's time, and the wrong ones recorded. */
class GetEventProbe {
  readonly ms: number[] = [];
  private running = true;
  private readonly done: Promise<void>;

  constructor(ctx: ShapeContext, eventId: string, t: Tally) {
    this.done = (async () => {
      while (this.running) {
        const t0 = performance.now();
        try {
          const r = await rawCall(ctx.url, { path: `${L}/rest/getEvent?eventId=${eventId}`, timeoutMs: ctx.sizes.hangMs });
          const ms = performance.now() - t0;
          this.ms.push(ms);
          const ok = (r.json as { data?: { eventId?: unknown } } | undefined)?.data?.eventId === eventId;
          t.record(
            !ok ? `getEvent answered ${snippet(r.text)}` : ms > GET_EVENT_BOUND_MS ? `getEvent took ${Math.round(ms)} ms` : undefined,
          );
        } catch (err) {
          t.record(`getEvent: no answer: ${describeError(err)}`);
        }
        await sleep(20);
      }
    })();
  }

  async stop(): Promise<string> {
    this.running = false;
    await this.done;
    const sorted = [...this.ms].sort((a, b) => a - b);
    const at = (q: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN);
    return `getEvent meanwhile: ${sorted.length} answers, median ${at(0.5)} ms, max ${at(1)} ms`;
  }
}

interface PatternsFixture {
  topic: string;
  eventId: string;
}

function patternsShape(): Shape {
  let fixture: Promise<PatternsFixture> | undefined;
  const prepare = (ctx: ShapeContext) => {
    fixture ??= (async () => {
      const topic = await openTopic(ctx, "attack.patterns");
      let eventId = "";
      for (let i = 0; i < scale(ctx, EVENTS); i++) eventId = await publish(ctx, topic, `e${i}`);
      return { topic, eventId };
    })();
    return fixture;
  };
  return {
    name: "stomp-subscribe-12000-patterns",
    family: "F11",
    what: () =>
      `STOMP SUBSCRIBE of ${PATTERNS} '+' patterns from OFFSET_FIRST over ${EVENTS} events (a bounded answer: RECEIPT, or ERROR 100110)`,
    prepare: async (ctx) => void (await prepare(ctx)),
    run: async (ctx) => {
      const { eventId } = await prepare(ctx);
      const t = new Tally();
      const probe = new GetEventProbe(ctx, eventId, t);
      const stomp = await RawStomp.open(`${ctx.url.replace(/^http/, "ws")}${L}/stomp`);
      try {
        await stomp.connect();
        const n = stomp.frames.length;
        const destination = Array.from({ length: scale(ctx, PATTERNS) }, () => "+").join(",");
        stomp.send(frame("SUBSCRIBE", { destination, id: "p", eventId: "OFFSET_FIRST" }));
        const reply = await stomp.nth(n, ctx.sizes.hangMs);
        const code = reply.headers.find(([k]) => k === "code")?.[1];
        t.record(reply.command === "RECEIPT" || code === "100110" ? undefined : `SUBSCRIBE answered ${reply.command} ${code ?? ""}`);
        // A subscription taken reads its pages now: give it the time it takes, while getEvent is timed.
        await sleep(2_000);
      } catch (err) {
        t.record(`SUBSCRIBE: ${describeError(err)}`);
      } finally {
        stomp.close();
      }
      return t.outcome([await probe.stop()]);
    },
  };
}

/** One MQTT connection over WebSocket from `from`, with `count` filters that match nothing; the SUBACK's codes. */
async function idleClient(ctx: ShapeContext, from: string, n: number, count: number): Promise<{ client: MqttClient; codes: number[] }> {
  const client = connect(`${ctx.url.replace(/^http/, "ws")}${L}/mqtt`, {
    clientId: `attack-idle-${n}-${Math.random().toString(36).slice(2, 8)}`,
    protocolVersion: 5,
    reconnectPeriod: 0,
    connectTimeout: ctx.sizes.hangMs,
    wsOptions: { localAddress: from },
  });
  await new Promise<void>((resolve, reject) => {
    client.once("connect", () => resolve());
    client.once("error", reject);
  });
  const filters = Array.from({ length: count }, (_, i) => `attack.idle/${n}/${i}/+`);
  const granted = await client.subscribeAsync(filters, { qos: 0 });
  return { client, codes: granted.map((g) => g.qos) };
}

function idleFiltersShape(): Shape {
  return {
    name: "mqtt-idle-filters-5x1000",
    family: "F12",
    what: () =>
      `${MQTT_CONNECTIONS} MQTT connections (one per caller address) of ${MQTT_FILTERS} filters matching nothing, while ${BLOCKS} blocks are sealed; getEvent timed`,
    run: async (ctx) => {
      const t = new Tally();
      const topic = await openTopic(ctx, "attack.blocks");
      const eventId = await publish(ctx, topic, "first");
      const clients: MqttClient[] = [];
      const notes: string[] = [];
      try {
        for (let c = 0; c < MQTT_CONNECTIONS; c++) {
          const { client, codes } = await idleClient(ctx, callerAddress(c), c, scale(ctx, MQTT_FILTERS));
          clients.push(client);
          const refused = codes.filter((q) => q > 1).length;
          if (refused > 0)
            notes.push(
              `connection ${c + 1}: ${refused} of ${codes.length} filters refused (0x${(codes.find((q) => q > 1) ?? 0).toString(16)})`,
            );
        }
        const probe = new GetEventProbe(ctx, eventId, t);
        for (let b = 0; b < BLOCKS; b++) {
          await publish(ctx, topic, `b${b}`);
          await sleep(50);
        }
        notes.push(await probe.stop());
      } catch (err) {
        t.fail(`setting up the idle filters: ${describeError(err)}`);
      } finally {
        await Promise.all(clients.map((c) => c.endAsync(true).catch(() => {})));
        await rawCall(ctx.url, { path: `/event-m/rest/close?topic=${topic}`, timeoutMs: ctx.sizes.hangMs }).catch(() => undefined);
      }
      return t.outcome(notes);
    },
  };
}

/** F11 and F12 in run order. */
export function liveFeedShapes(): Shape[] {
  return [patternsShape(), idleFiltersShape()];
}
