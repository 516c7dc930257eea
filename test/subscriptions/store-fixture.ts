import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { type LogRecord, type MatchRule, silentLogger } from "@evb/domain";
import { BlockSealer, DeliveryStore, DispatchStore, migrate, poolOptions, type SubscribeRequest, SubscriptionStore } from "@evb/storage";

import { type DispatchIndex, type DispatchResult, LedgerDispatch } from "../../services/notifier/src/dispatch/ledger-dispatch.ts";

/** The notifier's own index (no copy here, so the store tests exercise the real matcher). */
export { SubscriptionIndex as Index } from "../../services/notifier/src/dispatch/subscription-index.ts";

/** Dispatch bounds roomy enough that tests not about them dispatch everything in one run. */
export const LIMITS = { maxEvents: 1000, maxRows: 50_000 };

/**
 * Store-level tests against real Postgres, each in a fresh schema: the gateway's and the
 * notifier's stores on one pool, and a sealer that writes blocks of group "1" as the indexer does.
 */
export class StoreFixture {
  readonly schema = `t_${randomBytes(4).toString("hex")}`;
  readonly pool: pg.Pool;
  readonly subs: SubscriptionStore;
  readonly deliveries: DeliveryStore;
  /** The notifier's dispatch runs (its planning) over the real `DispatchStore`. */
  readonly dispatches: LedgerDispatch;
  private readonly sealer: BlockSealer;
  private offset = 0;

  private constructor(poolSize: number) {
    this.pool = new pg.Pool(poolOptions(inject("databaseUrl"), this.schema, poolSize));
    this.subs = new SubscriptionStore(this.pool);
    this.deliveries = new DeliveryStore(this.pool);
    this.dispatches = new LedgerDispatch(new DispatchStore(this.pool));
    this.sealer = new BlockSealer({ pool: this.pool, sealer: { index: 0 } });
  }

  static async open(poolSize = 4): Promise<StoreFixture> {
    const f = new StoreFixture(poolSize);
    await migrate(f.pool, f.schema, silentLogger);
    return f;
  }

  async close(): Promise<void> {
    await this.pool.query(`DROP SCHEMA "${this.schema}" CASCADE`);
    await this.pool.end();
  }

  /** Seals one block of group "1" with one event per topic given, in that order. */
  seal(...topics: string[]) {
    return this.sealer.seal(
      "1",
      1,
      topics.map((t) => ({ partition: 0, offset: this.offset++, record: record(t, `c${this.offset}`) })),
    );
  }

  /** Dispatches group "1" until nothing is left; returns the runs. */
  async dispatchAll(index: DispatchIndex, limits = LIMITS): Promise<DispatchResult[]> {
    const runs: DispatchResult[] = [];
    for (let r = await this.dispatches.dispatch("1", index, limits); r; r = await this.dispatches.dispatch("1", index, limits))
      runs.push(r);
    return runs;
  }

  request(id: string, topic: string, rule: MatchRule = "M"): SubscribeRequest {
    return {
      id,
      groupId: "1",
      topic,
      matchRule: rule,
      bodyVariant: rule,
      url: "http://127.0.0.1:1/cb",
      nodeInstance: "127.0.0.1:8080",
      remoteIp: "127.0.0.1",
      owner: "127.0.0.1",
      now: Date.now(),
    };
  }

  /** Takes the subscription's delivery lease as a notifier's slice does (expiring at once); its token. */
  async lease(id: string): Promise<number> {
    const l = await this.deliveries.lease(id, 0, 0);
    if (!l.ok) throw new Error(l.retryInMs === null ? `${id} is not live` : `${id} is leased`);
    return l.token;
  }

  /** A lease as a delivery slice tries it: null when not taken (not live, or it changed under the statement). */
  async tryLease(id: string): Promise<number | null> {
    const l = await this.deliveries.lease(id, 0, 0);
    return l.ok ? l.token : null;
  }

  /** Records a delivery of (height, idx) under `token` (a fresh lease when omitted). */
  async deliver(id: string, at: { height: number; idx: number }, token?: number) {
    return this.deliveries.deliveredBatch({
      id,
      token: token ?? (await this.lease(id)),
      events: [{ height: at.height, idx: at.idx }],
      now: Date.now(),
      leaseMs: 0,
    });
  }

  /** Runs a resumed subscription's refill to the end, in pages of `pageEvents`; the rows each page added. */
  async catchUpAll(id: string, pageEvents?: number): Promise<number[]> {
    const pages: number[] = [];
    const token = await this.lease(id);
    for (;;) {
      const r = await this.deliveries.catchUp(id, token, 0, pageEvents);
      if (!r) throw new Error(`${id} is not live`);
      pages.push(r.added);
      if (r.done) return pages;
    }
  }

  /** The row's counters next to what the backlog table really holds. */
  async counts(id: string): Promise<{ pending: number; backlog: number; delivered: number }> {
    const r = await this.pool.query<{ pending: number; backlog: number; delivered: number }>(
      `SELECT s.pending_count AS pending, s.delivered_count AS delivered,
         (SELECT count(*)::int FROM subscription_backlog b WHERE b.subscription_id = s.id) AS backlog
       FROM subscriptions s WHERE s.id = $1`,
      [id],
    );
    return r.rows[0] as { pending: number; backlog: number; delivered: number };
  }
}

function record(topic: string, content: string): LogRecord {
  return {
    v: 1,
    requestId: randomUUID(),
    gatewayId: "gw",
    groupId: "1",
    topic,
    content,
    extensions: { "event-format": "text" },
    sender: "0x00",
    publishedAt: Date.now(),
  };
}
