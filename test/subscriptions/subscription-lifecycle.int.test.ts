import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRANSITIONS, type Transition } from "../../packages/storage/src/subscription-transitions.ts";
import { countersAfter } from "../support/counters-after.ts";
import { Index, StoreFixture } from "./store-fixture.ts";

// Crash survived: none. The lifecycle table (packages/storage/src/subscription-transitions.ts) is
// what docs/delivery.md shows and what the unit tests hold the SQL to; here one subscription goes
// through every transition on real Postgres and each row change is checked against the table.

interface Snap {
  delivered: number;
  pending: number;
  notifiedAt: number | null;
  rev: number;
  active: boolean;
  revision: number;
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  failingSince: number | null;
  deadAt: number | null;
  leaseToken: number;
  leaseUntil: number;
  url: string;
}

/** A row not written yet: what the columns default to. */
const NONE: Snap = {
  delivered: 0,
  pending: 0,
  notifiedAt: null,
  rev: 0,
  active: false,
  revision: 0,
  attempts: 0,
  nextAttemptAt: 0,
  lastError: null,
  failingSince: null,
  deadAt: null,
  leaseToken: 0,
  leaseUntil: 0,
  url: "",
};

describe("the subscription lifecycle table", () => {
  let f: StoreFixture;
  beforeAll(async () => {
    f = await StoreFixture.open();
  });
  afterAll(async () => {
    await f?.close();
  });

  const snap = async (id: string): Promise<Snap> =>
    (
      await f.pool.query<Snap>(
        `SELECT delivered_count AS delivered, pending_count AS pending, notified_at AS "notifiedAt", stats_rev AS rev, active,
           revision, attempts, next_attempt_at AS "nextAttemptAt", last_error AS "lastError", failing_since AS "failingSince",
           dead_at AS "deadAt", lease_token AS "leaseToken", lease_until AS "leaseUntil", url
         FROM subscriptions WHERE id = $1`,
        [id],
      )
    ).rows[0] as Snap;

  /** Runs `step`, then checks the row changed as TRANSITIONS says `t` changes it. */
  async function expectTransition(id: string, t: Transition, step: () => Promise<unknown>, by: { n?: number; now?: number } = {}) {
    const before = (await snap(id)) ?? NONE;
    await step();
    const after = await snap(id);
    const spec = TRANSITIONS[t];
    const counters = ({ delivered, pending, notifiedAt, rev }: Snap) => ({ delivered, pending, notifiedAt, rev });
    expect(counters(after), `${t}: counters`).toEqual(countersAfter(t, counters(before), by));
    const retry = ({ attempts, nextAttemptAt, lastError, failingSince }: Snap) => ({ attempts, nextAttemptAt, lastError, failingSince });
    if (spec.retry === "reset") {
      expect(retry(after), `${t}: retry state`).toEqual({ attempts: 0, nextAttemptAt: 0, lastError: null, failingSince: null });
    }
    if (spec.retry === "keep") expect(retry(after), `${t}: retry state`).toEqual(retry(before));
    if (spec.deadLetter === "release") expect(after.deadAt, `${t}: dead letter`).toBeNull();
    if (spec.deadLetter === "set") expect(after.deadAt, `${t}: dead letter`).not.toBeNull();
    if (spec.deadLetter === "keep") expect(after.deadAt, `${t}: dead letter`).toBe(before.deadAt);
    expect(after.revision !== before.revision, `${t}: new revision`).toBe(spec.rematch);
    expect(after.active, `${t}: live`).toBe(spec.live === "keep" ? before.active : spec.live === "start");
    if (spec.lease === "take" || spec.lease === "revoke") expect(after.leaseToken, `${t}: lease token`).not.toBe(before.leaseToken);
    else expect(after.leaseToken, `${t}: lease token`).toBe(before.leaseToken);
    if (spec.lease === "keep") expect(after.leaseUntil, `${t}: lease`).toBe(before.leaseUntil);
    if (spec.lease === "end" || spec.lease === "revoke") expect(after.leaseUntil, `${t}: lease`).toBe(0);
    return after;
  }

  it("every transition changes the row as the table says", async () => {
    const id = randomUUID();
    const index = new Index();
    await expectTransition(id, "created", () => f.subs.subscribe(f.request(id, "lc/a")));

    await f.seal("lc/a", "lc/b", "lc/a", "lc/a");
    await expectTransition(id, "matched", () => f.dispatchAll(index), { n: 3 });

    let token = 0;
    await expectTransition(id, "leased", async () => {
      token = await f.lease(id);
    });
    const [head] = await f.deliveries.backlog(id, 1);
    const at = head as { height: number; idx: number };
    await expectTransition(id, "delivered", () => f.deliveries.deliveredBatch({ id, token, events: [at], now: 1234, leaseMs: 0 }), {
      n: 1,
      now: 1234,
    });

    const failure = { attempts: 1, nextAttemptAt: 5_000, error: "HTTP 500", deadAt: null, failingSince: 4_000 };
    const failed = await expectTransition(id, "failed", () => f.deliveries.failed(id, token, failure));
    expect(failed).toMatchObject({ attempts: 1, nextAttemptAt: 5_000, lastError: "HTTP 500", failingSince: 4_000, deadAt: null });
    const dead = await expectTransition(id, "dead", () => f.deliveries.failed(id, token, { ...failure, attempts: 2, deadAt: 6_000 }));
    expect(dead).toMatchObject({ attempts: 2, deadAt: 6_000, failingSince: 4_000 });
    expect(await f.subs.deadLettered("1")).toHaveLength(1);

    await expectTransition(id, "replayed", () => f.subs.replay(id));
    expect(await f.subs.deadLettered("1")).toHaveLength(0);

    await f.deliveries.failed(id, token, { ...failure, deadAt: 7_000 });
    const continued = await expectTransition(id, "continued", () =>
      f.subs.subscribe({ ...f.request(id, "lc/a"), url: "http://127.0.0.1:2/cb" }),
    );
    expect(continued.url).toBe("http://127.0.0.1:2/cb");

    await expectTransition(id, "renewed", () => f.deliveries.renew(id, token, 60_000));
    await expectTransition(id, "released", () => f.deliveries.release(id, token));

    await f.deliveries.failed(id, token, failure);
    await expectTransition(id, "unsubscribed", () => f.subs.unsubscribe(id));

    // Missed while away, refilled after the resume.
    await f.seal("lc/a", "lc/a");
    await f.dispatchAll(index);
    await expectTransition(id, "resumed", () => f.subs.subscribe(f.request(id, "lc/a")));
    token = await f.lease(id);
    let added = 0;
    await expectTransition(
      id,
      "refilled",
      async () => {
        added = (await f.deliveries.catchUp(id, token, 0))?.added ?? -1;
      },
      // The 2 left undelivered at the ending and the 2 published while away.
      { n: 4 },
    );
    expect(added).toBe(4);

    // Replayed from its first delivered event, while dead-lettered: the cursor goes back before
    // it, the backlog is dropped and refilled from there (all 5 events of lc/a), and the lease is
    // revoked, so the slice that held it records nothing more.
    await f.deliveries.failed(id, token, { ...failure, deadAt: 9_000 });
    await expectTransition(id, "rewound", () => f.subs.rewind(id, { event: at }));
    expect(await f.subs.deadLettered("1")).toHaveLength(0);
    expect(await f.deliveries.deliveredBatch({ id, token, events: [at], now: 1, leaseMs: 0 })).toBeNull();
    const replayToken = await f.lease(id);
    expect((await f.deliveries.catchUp(id, replayToken, 0))?.added).toBe(5);
    expect((await f.deliveries.backlog(id, 1))[0]).toMatchObject(at);
    // A position past the cursor moves nothing forward: the backlog stays as it is.
    await f.subs.rewind(id, { timeMs: Date.now() + 3_600_000 });
    expect((await snap(id))?.pending).toBe(0);
    await f.deliveries.release(id, replayToken);

    // The owner takes the ended id for another topic: a fresh start, counters and all.
    await f.subs.unsubscribe(id);
    await expectTransition(id, "created", () => f.subs.subscribe(f.request(id, "lc/b")));
  });

  // Regression: unsubscribe kept the lease token, so a slice that had read the head before an
  // unsubscribe and a resume could still record it afterwards: the cursor passed an event the
  // refill then added again behind it (delivered twice, counters off until it was).
  it("a slice that read the head before an unsubscribe cannot record it after a resume", async () => {
    const id = randomUUID();
    const index = new Index();
    await f.subs.subscribe(f.request(id, "lr/a"));
    await f.seal("lr/a", "lr/a");
    await f.dispatchAll(index);
    const token = await f.lease(id);
    const head = (await f.deliveries.backlog(id, 1))[0] as { height: number; idx: number };

    await f.subs.unsubscribe(id);
    await f.subs.subscribe(f.request(id, "lr/a"));
    expect(await f.deliveries.deliveredBatch({ id, token, events: [head], now: 1, leaseMs: 0 })).toBeNull();
    expect(await snap(id)).toMatchObject({ delivered: 0, leaseUntil: 0 });
    // The resumed subscription is leased at once by the next slice, which refills and delivers.
    const next = await f.lease(id);
    expect(next).not.toBe(token);
    expect((await f.deliveries.catchUp(id, next, 0))?.added).toBe(2);
  });
});
