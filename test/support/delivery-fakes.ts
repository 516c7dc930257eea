import { vi } from "vitest";
import { silentLogger } from "@evb/domain";
import type { BacklogItem, DeliveryBatch, LeaseResult, SubscriptionRow, SubscriptionStats } from "@evb/storage";
import type { CallbackPoster } from "../../services/notifier/src/delivery/callback-flight.ts";
import type { PostOptions, PostResult } from "../../services/notifier/src/delivery/callback-transport.ts";
import type { DeliveryLedger } from "../../services/notifier/src/delivery/delivery-ledger.ts";
import { DeliverySlice, type SliceDeps } from "../../services/notifier/src/delivery/delivery-slice.ts";

/** Fakes of a delivery slice's ports (the notifier's unit tests): one subscription's ledger, a receiver, a slice over them. */

export const ID = "sub-1";

export function item(n: number): BacklogItem {
  return { height: n, idx: 0, eventId: `h-${n}-${n}`, topic: "t", content: Buffer.from("x"), extensions: {}, sealedAt: 0 };
}

/** An in-memory ledger: one subscription, its backlog, and every write it was asked for. */
export class FakeLedger implements DeliveryLedger {
  row: SubscriptionRow = {
    id: ID,
    groupId: "1",
    topic: "t",
    matchRule: "M",
    bodyVariant: "M",
    url: "http://receiver.test/hook",
    nodeInstance: "n",
    remoteIp: "",
    owner: "o",
    interfaceType: "M",
    createdAt: 0,
    active: true,
    delivered: 0,
    pending: 0,
    notifiedAt: null,
    attempts: 0,
    nextAttemptAt: 0,
    lastError: null,
    deadAt: null,
    rev: 0,
    catchingUp: false,
    failingSince: null,
  };
  items: BacklogItem[] = [];
  token = 7;
  leaseFree = true;
  records: DeliveryBatch[] = [];
  failures: Parameters<DeliveryLedger["failed"]>[2][] = [];
  released = 0;
  /** Set to make the next record find the lease taken over. */
  lostOnRecord = false;
  reads = 0;

  async subscription(): Promise<SubscriptionRow | null> {
    return { ...this.row };
  }
  async backlog(_id: string, limit: number): Promise<BacklogItem[]> {
    this.reads++;
    return this.items.slice(0, limit);
  }
  async backlogAfter(_id: string, height: number, idx: number, limit: number): Promise<BacklogItem[]> {
    this.reads++;
    return this.items.filter((i) => i.height > height || (i.height === height && i.idx > idx)).slice(0, limit);
  }
  /** Caps the lease's first batch below the slice's read size (as DeliveryStore's count and byte bounds do). */
  firstBatchCap = Number.POSITIVE_INFINITY;
  async lease(_id: string, _ms: number, limit: number): Promise<LeaseResult> {
    if (!this.row.active || this.row.deadAt !== null) return { ok: false, retryInMs: null };
    if (!this.leaseFree) return { ok: false, retryInMs: 300 };
    this.reads++;
    const n = Math.min(limit, this.firstBatchCap);
    return { ok: true, token: this.token, row: { ...this.row }, backlog: this.items.slice(0, n), more: this.items.length > n };
  }
  async renew(): Promise<boolean> {
    return true;
  }
  async release(): Promise<void> {
    this.released++;
  }
  async deliveredBatch(b: DeliveryBatch): Promise<SubscriptionStats | null> {
    if (this.lostOnRecord) return null;
    this.records.push(b);
    const gone = new Set(b.events.map((e) => e.height));
    this.items = this.items.filter((i) => !gone.has(i.height));
    this.row.attempts = 0;
    return { id: ID, nodeInstance: "n", delivered: 0, pending: this.items.length, notifiedAt: b.now, createdAt: 0, rev: 1 };
  }
  async failed(_id: string, _token: number, f: Parameters<DeliveryLedger["failed"]>[2]): Promise<boolean> {
    this.failures.push(f);
    this.row.attempts = f.attempts;
    this.row.nextAttemptAt = f.nextAttemptAt;
    this.row.failingSince = f.failingSince ?? null;
    if (f.deadAt !== null) this.row.deadAt = f.deadAt;
    return true;
  }
  async catchUp(): Promise<null> {
    return null;
  }
  recordedHeights(): number[] {
    return this.records.flatMap((r) => r.events.map((e) => e.height));
  }
}

/**
 * A receiver behind the transport port: answers each POST after `delayMs` (fake timers) with
 * `answer(height, nth attempt of that event)`, and notes the order requests were written in and
 * how many were in flight at once.
 */
export class FakeReceiver implements CallbackPoster {
  delayMs = 10;
  /** Per event, when set: how long its answer takes. */
  delayOf: ((height: number) => number) | null = null;
  answer: (height: number, nth: number) => PostResult = () => ({ delivered: true, status: 200, excerpt: null });
  written: number[] = [];
  inFlight = 0;
  maxInFlight = 0;
  /** How many requests were in flight when each one was sent. */
  busyAtStart: number[] = [];
  private tries = new Map<number, number>();

  async post(_url: string, body: string, _headers: Record<string, string>, options?: PostOptions): Promise<PostResult> {
    const height = Number((JSON.parse(body) as { event: { eventId: string } }).event.eventId.split("-")[1]);
    this.written.push(height);
    this.busyAtStart.push(this.inFlight);
    options?.onWritten?.();
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    const nth = (this.tries.get(height) ?? 0) + 1;
    this.tries.set(height, nth);
    await new Promise((r) => setTimeout(r, this.delayOf?.(height) ?? this.delayMs));
    this.inFlight--;
    return this.answer(height, nth);
  }
}

export const fail = (status: number, failure: "SERVER_ERROR" | "GONE"): PostResult => ({
  delivered: false,
  failure,
  status,
  retryAfter: undefined,
  error: `HTTP ${status}`,
  excerpt: null,
});

export function slicer(
  ledger: FakeLedger,
  rx: FakeReceiver,
  over: Partial<SliceDeps> & { window?: number; recordEvents?: number; sliceEvents?: number } = {},
) {
  const { window = 1, recordEvents = 3, sliceEvents = 100, ...deps } = over;
  return new DeliverySlice(
    {
      ledger,
      transport: rx,
      signer: { headers: (sub, ev) => ({ "webhook-id": `msg_${sub}_${ev}` }) },
      stats: { copy: async () => {} },
      logger: silentLogger,
      random: () => 0,
      ...deps,
    },
    {
      limits: {
        retry: { baseMs: 1000, maxMs: 60_000, maxAttempts: 3, retryAfterMaxMs: 30_000 },
        disableAfterMs: 86_400_000,
        recordEvents,
        sliceEvents,
        window,
      },
      logAttempts: true,
      lockMs: 30_000,
      attemptMs: 5_000,
      sliceMs: 10_000,
    },
  );
}

/** Runs a slice to its end while fake time passes. */
export async function runSlice(s: DeliverySlice) {
  const end = s.run(ID);
  await vi.runAllTimersAsync();
  return end;
}
