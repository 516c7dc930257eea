/** One QoS 1 delivery waiting for a packet id: how to write it, and what its PUBACK settles. */
interface Queued {
  write: (packetId: number) => void;
  acked: () => void;
}

const MAX_PACKET_ID = 65_535;

/**
 * The QoS 1 deliveries of one connection that wait for the client's PUBACK: at most `limit` at
 * once (MQTT_MAX_INFLIGHT, and the client's Receive Maximum), each under a packet id not in use.
 * Subscriptions ask `room()` before they read on, so the window bounds what a slow client holds;
 * a delivery that arrives when the window is full (several subscriptions woken by one PUBACK)
 * waits here, at most one per subscription, and goes out as PUBACKs free the window.
 */
export class DeliveryWindow {
  private readonly limit: number;
  private readonly inFlight = new Map<number, () => void>();
  private readonly queued: Queued[] = [];
  private waiters: (() => void)[] = [];
  private nextId = 1;
  private closed = false;

  constructor(limit: number) {
    this.limit = Math.max(1, Math.min(limit, MAX_PACKET_ID));
  }

  /** Deliveries sent and not yet acknowledged. */
  get size(): number {
    return this.inFlight.size;
  }

  private get full(): boolean {
    return this.inFlight.size + this.queued.length >= this.limit;
  }

  /** Resolves once a delivery may be added (at once when it may, or when the window is closed). */
  room(): Promise<void> {
    if (this.closed || !this.full) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Sends a delivery under a free packet id now, or once the window has room; `acked` runs on its PUBACK. */
  send(write: (packetId: number) => void, acked: () => void): void {
    if (this.closed) return;
    if (this.inFlight.size >= this.limit) {
      this.queued.push({ write, acked });
      return;
    }
    const id = this.takeId();
    this.inFlight.set(id, acked);
    write(id);
  }

  /** A PUBACK: settles its delivery and lets the next ones go. False for an id not in flight. */
  ack(packetId: number): boolean {
    const acked = this.inFlight.get(packetId);
    if (!acked) return false;
    this.inFlight.delete(packetId);
    acked();
    for (let next = this.queued.shift(); next; next = this.inFlight.size < this.limit ? this.queued.shift() : undefined) {
      const id = this.takeId();
      this.inFlight.set(id, next.acked);
      next.write(id);
    }
    if (!this.full) this.release();
    return true;
  }

  /** The connection ended: nothing more is sent, whoever waits for room goes on (and finds the socket closed). */
  close(): void {
    this.closed = true;
    this.queued.length = 0;
    this.release();
  }

  private takeId(): number {
    while (this.inFlight.has(this.nextId)) this.nextId = (this.nextId % MAX_PACKET_ID) + 1;
    const id = this.nextId;
    this.nextId = (this.nextId % MAX_PACKET_ID) + 1;
    return id;
  }

  private release(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
