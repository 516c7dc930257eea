import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BacklogItem } from "@evb/storage";
import { TestSystem } from "../support/system.ts";
import { admin, E, openTopic, publishMany, subscribe } from "./helpers.ts";
import { Index, StoreFixture } from "./store-fixture.ts";

// Crash survived: none. A notifier that keeps running after another took its job over (BullMQ
// lock lost, e.g. in a Redis stall longer than DELIVERY_LOCK_MS) must be fenced out.
describe("a notifier that loses its BullMQ lock keeps delivering", () => {
  describe("the Postgres lease", () => {
    let f: StoreFixture;
    beforeAll(async () => {
      f = await StoreFixture.open();
    });
    afterAll(async () => {
      await f?.close();
    });

    it("a stale lease holder can neither record a delivery nor change the retry state; a running lease cannot be taken", async () => {
      const id = randomUUID();
      await f.subs.subscribe(f.request(id, "lease/a"));
      await f.seal("lease/a", "lease/a");
      await f.dispatchAll(new Index());
      const [head] = await f.deliveries.backlog(id, 1);

      const a = await f.deliveries.lease(id, 60_000, 0);
      if (!a.ok) throw new Error("first lease refused");
      const refused = await f.deliveries.lease(id, 60_000, 0);
      expect(refused.ok).toBe(false);
      expect(refused.ok ? 0 : refused.retryInMs).toBeGreaterThan(50_000);

      // A's lease runs out (its notifier stalled) and B takes over; two takers racing get one lease.
      await f.pool.query("UPDATE subscriptions SET lease_until = 0 WHERE id = $1", [id]);
      const racing = await Promise.all([f.deliveries.lease(id, 60_000, 0), f.deliveries.lease(id, 60_000, 0)]);
      expect(racing.filter((l) => l.ok)).toHaveLength(1);
      const b = racing.find((l) => l.ok) as { ok: true; token: number };
      expect(b.token).toBeGreaterThan(a.token);

      const at = head as { height: number; idx: number };
      expect(await f.deliver(id, at, a.token)).toBeNull();
      expect(await f.deliveries.failed(id, a.token, { attempts: 1, nextAttemptAt: Date.now() + 1000, error: "x", deadAt: null })).toBe(
        false,
      );
      expect(await f.deliveries.renew(id, a.token, 60_000)).toBe(false);
      expect(await f.counts(id)).toEqual({ pending: 2, backlog: 2, delivered: 0 });
      expect((await f.deliveries.subscription(id))?.attempts).toBe(0);

      expect(await f.deliver(id, at, b.token)).toMatchObject({ delivered: 1, pending: 1 });
      // Released, the next slice (any notifier) starts at once.
      await f.deliveries.release(id, b.token);
      expect((await f.deliveries.lease(id, 60_000, 0)).ok).toBe(true);
    });

    it("the lease comes with the first batch: in order, with content, only events after the delivery cursor", async () => {
      const id = randomUUID();
      await f.subs.subscribe(f.request(id, "lease/c"));
      await f.seal("lease/c", "lease/c", "lease/c");
      await f.dispatchAll(new Index());
      const all = await f.deliveries.backlog(id, 10);
      expect(all).toHaveLength(3);
      const first = await f.deliveries.lease(id, 0, 2);
      if (!first.ok) throw new Error("lease refused");
      expect(first.backlog).toEqual(all.slice(0, 2));
      expect(first.more).toBe(true);
      await f.deliver(id, all[0] as BacklogItem, first.token);
      // A row at or below the cursor, as a snapshot taken before that record would still show it.
      await f.pool.query("INSERT INTO subscription_backlog (subscription_id, height, idx) VALUES ($1, $2, $3)", [
        id,
        all[0]?.height,
        all[0]?.idx,
      ]);
      const next = await f.deliveries.lease(id, 0, 10);
      if (!next.ok) throw new Error("lease refused");
      expect(next.backlog.map((e) => e.eventId)).toEqual(all.slice(1).map((e) => e.eventId));
      expect(next.backlog[0]?.content).toEqual(all[1]?.content);
      expect(next.more).toBe(false);
    });

    it("the first batch read under the lease stops at 256 KiB of content past its first event, and says more are there", async () => {
      const id = randomUUID();
      await f.subs.subscribe(f.request(id, "lease/big"));
      await f.seal("lease/big", "lease/big", "lease/big");
      await f.dispatchAll(new Index());
      const all = await f.deliveries.backlog(id, 10);
      // 200 KB each: the first always comes, the second starts at 200 KB (under the bound), the third past it.
      await f.pool.query(
        "UPDATE events SET content = decode(repeat('ab', 200000), 'hex') WHERE (height, idx) IN (SELECT height, idx FROM subscription_backlog WHERE subscription_id = $1)",
        [id],
      );
      const l = await f.deliveries.lease(id, 0, 50);
      if (!l.ok) throw new Error("lease refused");
      expect(l.backlog.map((e) => e.eventId)).toEqual(all.slice(0, 2).map((e) => e.eventId));
      expect(l.backlog[1]?.content.length).toBe(200_000);
      expect(l.more).toBe(true);
    });

    it("the lease comes with the row as it left it, retry state included; a subscription that is not live gets none", async () => {
      const id = randomUUID();
      await f.subs.subscribe(f.request(id, "lease/b"));
      const a = await f.lease(id);
      await f.deliveries.failed(id, a, { attempts: 2, nextAttemptAt: 5, error: "HTTP 503", deadAt: null });
      await f.deliveries.release(id, a);
      const b = await f.deliveries.lease(id, 60_000, 0);
      if (!b.ok) throw new Error("lease refused");
      expect(b.row).toMatchObject({ id, active: true, attempts: 2, nextAttemptAt: 5, lastError: "HTTP 503", deadAt: null });
      await f.deliveries.release(id, b.token);

      // Dead-lettered, then unsubscribed: no lease, and nothing to wait for (retryInMs null).
      await f.deliveries.failed(id, await f.lease(id), { attempts: 3, nextAttemptAt: 0, error: "HTTP 500", deadAt: Date.now() });
      expect(await f.deliveries.lease(id, 60_000, 0)).toEqual({ ok: false, retryInMs: null });
      await f.subs.replay(id);
      expect((await f.deliveries.lease(id, 0, 0)).ok).toBe(true);
      await f.subs.unsubscribe(id);
      expect(await f.deliveries.lease(id, 60_000, 0)).toEqual({ ok: false, retryInMs: null });
      expect(await f.deliveries.lease(randomUUID(), 60_000, 0)).toEqual({ ok: false, retryInMs: null });
    });
  });

  describe("two notifiers, the running job's lock lost mid-stream", () => {
    let sys: TestSystem;
    let server: Server;
    let redis: Redis;
    const requests: { eventId: string; start: number; end: number; status: number }[] = [];
    let inFlight = 0;
    let maxInFlight = 0;

    beforeAll(async () => {
      sys = await TestSystem.start({
        notifiers: 2,
        env: {
          CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8",
          DELIVERY_LOCK_MS: "2000",
          DELIVERY_TIMEOUT_MS: "1500",
          NOTIFIER_POLL_MS: "100",
          NOTIFIER_SWEEP_MS: "500",
        },
      });
      redis = new Redis(sys.env.REDIS_URL as string, { maxRetriesPerRequest: 3 });
      // A receiver that notes when each request starts and when it ends (answered or cut off).
      server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", () => {
          const r = { eventId: JSON.parse(Buffer.concat(chunks).toString()).event.eventId as string, start: Date.now(), end: 0, status: 0 };
          requests.push(r);
          maxInFlight = Math.max(maxInFlight, ++inFlight);
          res.once("close", () => {
            r.end = Date.now();
            inFlight--;
          });
          setTimeout(() => {
            r.status = 200;
            res.writeHead(200).end();
          }, 150);
        });
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    });
    afterAll(async () => {
      redis?.disconnect();
      server?.closeAllConnections();
      server?.close();
      await sys?.stop();
    });

    it("the notifier that lost the lock stops; no two POSTs of one subscription overlap, order and counters hold", async () => {
      await openTopic(sys.gatewayUrl, "lease/b");
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/cb`;
      const id = await subscribe(sys.gatewayUrl, { topic: "lease/b", url });
      const ids = await publishMany(sys.gatewayUrl, "lease/b", 20, 4);
      // Lose the lock as a Redis stall would: the key expires under the running job.
      const key = `${sys.env.REDIS_PREFIX}:bull:callbacks:${id}:lock`;
      await expect.poll(() => requests.filter((r) => r.status === 200).length, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
      expect(await redis.del(key)).toBe(1);

      const firsts = () => [...new Set(requests.filter((r) => r.status === 200).map((r) => r.eventId))];
      await expect.poll(() => firsts().length, { timeout: 30_000 }).toBe(20);
      expect(firsts()).toEqual(ids);
      // The takeover never ran beside the old owner.
      expect(maxInFlight).toBe(1);
      const node = Object.keys((await admin(sys.gatewayUrl, E, "listSubscription")) as object)[0] as string;
      await expect
        .poll(async () => {
          const list = (await admin(sys.gatewayUrl, E, "listSubscription")) as Record<string, Record<string, Record<string, string>>>;
          return [list[node]?.[id]?.notifiedEventCount, list[node]?.[id]?.notifyingEventCount];
        })
        .toEqual(["20", "0"]);
    });
  });
});
