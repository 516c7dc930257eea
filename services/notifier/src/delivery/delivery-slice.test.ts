import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FakeLedger, FakeReceiver, fail, ID, item, runSlice, slicer } from "../../../../test/support/delivery-fakes.ts";

// Crash survived: none (unit tests of the slice loop behind its ports; the crash tests are
// test/subscriptions/notifier-crash.int.test.ts and delivery-lease.int.test.ts).

describe("delivery slice (fake ledger, fake receiver, fake timers)", () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("while the ledger is refused (replaced, not yet matched by an indexer) no lease is taken and nothing is sent: the job parks", async () => {
    const ledger = new FakeLedger();
    ledger.items = [1, 2].map(item);
    const rx = new FakeReceiver();
    const end = await runSlice(
      slicer(ledger, rx, { ledgerGuard: { refusal: () => "the ledger in Postgres is not the one this service served" } }),
    );
    expect(end).toEqual({ parkUntil: expect.any(Number) });
    expect(rx.written).toEqual([]);
    expect(ledger.records).toEqual([]);
  });

  it("window 1: each event is sent only after the previous 2xx; delivered events are recorded in batches, the last one releasing the lease", async () => {
    const ledger = new FakeLedger();
    ledger.items = [1, 2, 3, 4, 5, 6, 7].map(item);
    const rx = new FakeReceiver();
    expect(await runSlice(slicer(ledger, rx))).toBe("drained");
    expect(rx.written).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(rx.maxInFlight).toBe(1);
    expect(ledger.records.map((r) => r.events.map((e) => e.height))).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
    // The last record of a drained slice ends the lease itself: no separate release statement.
    expect(ledger.records.map((r) => r.leaseMs)).toEqual([30_000, 30_000, 0]);
    expect(ledger.released).toBe(0);
    expect(ledger.records.flatMap((r) => r.attempts ?? []).map((a) => a.eventId)).toEqual(
      ledger.recordedHeights().map((h) => item(h).eventId),
    );
  });

  it("a first batch the lease statement cut short is not taken for the whole backlog: the slice reads on", async () => {
    const ledger = new FakeLedger();
    ledger.items = [1, 2, 3, 4, 5].map(item);
    ledger.firstBatchCap = 2;
    const rx = new FakeReceiver();
    expect(await runSlice(slicer(ledger, rx))).toBe("drained");
    expect(rx.written).toEqual([1, 2, 3, 4, 5]);
    expect(ledger.reads).toBe(2);
  });

  it("records delivered events at least every 200 ms when the receiver is slow", async () => {
    const ledger = new FakeLedger();
    ledger.items = [1, 2, 3].map(item);
    const rx = new FakeReceiver();
    rx.delayMs = 150;
    await runSlice(slicer(ledger, rx, { recordEvents: 50 }));
    // 1 answers at 150 ms, 2 at 300 ms (200 ms since the slice began: recorded), 3 at the end.
    expect(ledger.records.map((r) => r.events.map((e) => e.height))).toEqual([[1, 2], [3]]);
  });

  it("a failed head is recorded as a retry and parks the job; nothing behind it is sent, what came before is recorded first", async () => {
    const ledger = new FakeLedger();
    ledger.items = [1, 2, 3, 4].map(item);
    const rx = new FakeReceiver();
    rx.answer = (h) => (h === 2 ? fail(503, "SERVER_ERROR") : { delivered: true, status: 200, excerpt: null });
    const end = await runSlice(slicer(ledger, rx));
    expect(rx.written).toEqual([1, 2]);
    expect(ledger.recordedHeights()).toEqual([1]);
    expect(ledger.failures).toEqual([
      expect.objectContaining({ attempts: 1, error: "HTTP 503", deadAt: null, nextAttemptAt: (end as { parkUntil: number }).parkUntil }),
    ]);
    // Backoff with random 0: half of RETRY_BASE_MS.
    expect((end as { parkUntil: number }).parkUntil - Date.now()).toBe(500);
    expect(ledger.released).toBe(1);
  });

  it("410 Gone dead-letters at once with the backlog kept", async () => {
    const ledger = new FakeLedger();
    ledger.items = [1, 2].map(item);
    const rx = new FakeReceiver();
    rx.answer = () => fail(410, "GONE");
    expect(await runSlice(slicer(ledger, rx))).toBe("dead");
    expect(ledger.failures).toEqual([
      expect.objectContaining({ attempts: 1, deadAt: Date.now(), error: expect.stringMatching(/410 Gone/) }),
    ]);
    expect(ledger.items).toHaveLength(2);
  });

  it("the retry budget spent dead-letters the head; a retried head goes alone", async () => {
    const ledger = new FakeLedger();
    ledger.items = [1, 2, 3].map(item);
    const rx = new FakeReceiver();
    rx.answer = () => fail(500, "SERVER_ERROR");
    const s = slicer(ledger, rx, { window: 4 });
    const ends: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      ends.push(await runSlice(s));
      vi.setSystemTime(ledger.row.nextAttemptAt);
    }
    expect(ends.at(-1)).toBe("dead");
    expect(ledger.failures.map((f) => f.attempts)).toEqual([1, 2, 3]);
    // The first attempt went alone (a slice starts at window 1), and so did every retry.
    expect(rx.written).toEqual([1, 1, 1]);
  });

  it("a window: later events are sent while earlier ones are answered, each after the previous one was written, and recorded in order", async () => {
    const ledger = new FakeLedger();
    ledger.items = Array.from({ length: 20 }, (_, i) => item(i + 1));
    const rx = new FakeReceiver();
    // Later events answer sooner: the slice must still judge (and record) them in event order.
    rx.delayOf = (h) => 50 - h;
    const s = slicer(ledger, rx, { window: 4, recordEvents: 50 });
    expect(await runSlice(s)).toBe("drained");
    expect(rx.written).toEqual(ledger.recordedHeights());
    expect(ledger.recordedHeights()).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(rx.maxInFlight).toBe(4);
  });

  it("a window and a failure: events sent after the failed one are not recorded, and go again (in order) after it", async () => {
    const ledger = new FakeLedger();
    ledger.items = Array.from({ length: 12 }, (_, i) => item(i + 1));
    const rx = new FakeReceiver();
    rx.answer = (h, nth) => (h === 6 && nth === 1 ? fail(503, "SERVER_ERROR") : { delivered: true, status: 200, excerpt: null });
    const s = slicer(ledger, rx, { window: 4, recordEvents: 50 });
    const first = await runSlice(s);
    expect(first).toEqual({ parkUntil: expect.any(Number) });
    // 6 failed while 7, 8 and 9 were in flight (answered 2xx): only 1–5 are recorded.
    expect(ledger.recordedHeights()).toEqual([1, 2, 3, 4, 5]);
    const sentFirst = rx.written.length;
    expect(rx.written.slice(0, 6)).toEqual([1, 2, 3, 4, 5, 6]);
    vi.setSystemTime(ledger.row.nextAttemptAt);
    expect(await runSlice(s)).toBe("drained");
    expect(ledger.recordedHeights()).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    // The retry of 6 went alone, then the rest in order (7–9 for the second time).
    const again = rx.written.slice(sentFirst);
    expect(again).toEqual([6, 7, 8, 9, 10, 11, 12]);
  });

  it("a record that finds the lease taken over stops the slice: nothing more is sent", async () => {
    const ledger = new FakeLedger();
    ledger.items = [1, 2, 3, 4, 5, 6].map(item);
    ledger.lostOnRecord = true;
    const rx = new FakeReceiver();
    expect(await runSlice(slicer(ledger, rx))).toBe("idle");
    expect(rx.written).toEqual([1, 2, 3]);
  });

  it("a subscription leased by another notifier is looked at again soon, without a POST", async () => {
    const ledger = new FakeLedger();
    ledger.items = [item(1)];
    ledger.leaseFree = false;
    const rx = new FakeReceiver();
    expect(await runSlice(slicer(ledger, rx))).toEqual({ parkUntil: Date.now() + 300 });
    expect(rx.written).toEqual([]);
  });

  it("new events matched by this process while the slice runs are read by the same slice", async () => {
    const ledger = new FakeLedger();
    ledger.items = [item(1)];
    const rx = new FakeReceiver();
    const s = slicer(ledger, rx);
    rx.answer = (h) => {
      if (h === 1) {
        ledger.items.push(item(2));
        s.notify([ID]);
      }
      return { delivered: true, status: 200, excerpt: null };
    };
    expect(await runSlice(s)).toBe("drained");
    expect(rx.written).toEqual([1, 2]);
    expect(ledger.recordedHeights()).toEqual([1, 2]);
  });

  it("a failing counter copy (Redis refusing) still fails the slice, though it no longer holds up the next callbacks", async () => {
    const ledger = new FakeLedger();
    ledger.items = [1, 2, 3, 4].map(item);
    const rx = new FakeReceiver();
    const s = slicer(ledger, rx, { stats: { copy: async () => Promise.reject(new Error("READONLY")) } });
    const end = s.run(ID).then(
      () => "ended",
      (err: Error) => err.message,
    );
    await vi.runAllTimersAsync();
    expect(await end).toBe("READONLY");
    // The deliveries themselves were recorded before the copy failed.
    expect(ledger.recordedHeights()).toEqual([1, 2, 3, 4]);
  });

  it("with a window, the next events are read ahead: the window does not empty at the end of each read", async () => {
    const ledger = new FakeLedger();
    ledger.items = Array.from({ length: 120 }, (_, i) => item(i + 1));
    const rx = new FakeReceiver();
    const s = slicer(ledger, rx, { window: 4, recordEvents: 50, fairness: { anyWaiting: async () => false } });
    expect(await runSlice(s)).toBe("drained");
    expect(ledger.recordedHeights()).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    expect(rx.written).toEqual(ledger.recordedHeights());
    // Reads of 50: events 51 and 101 were sent while earlier ones were still in flight.
    expect(rx.busyAtStart.slice(8).every((n) => n >= 1)).toBe(true);
    expect(ledger.reads).toBeGreaterThanOrEqual(3);
  });

  it("after DELIVERY_SLICE_EVENTS the slice yields its slot only when other subscriptions wait for one", async () => {
    const run = async (waiting: boolean) => {
      const ledger = new FakeLedger();
      ledger.items = [1, 2, 3, 4, 5, 6, 7].map(item);
      const rx = new FakeReceiver();
      const s = slicer(ledger, rx, { fairness: { anyWaiting: async () => waiting }, sliceEvents: 3 });
      return { end: await runSlice(s), sent: rx.written };
    };
    expect(await run(true)).toEqual({ end: "yield", sent: [1, 2, 3] });
    expect(await run(false)).toEqual({ end: "drained", sent: [1, 2, 3, 4, 5, 6, 7] });
  });
});
