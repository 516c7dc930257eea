import { TIMED_OUT, withTimeout } from "@evb/domain";

/** What a `ReplaceableAdmin` needs of the client it holds. */
export interface ClosableClient {
  close(): Promise<void>;
}

export interface ReplaceableAdminOptions<A extends ClosableClient> {
  /** A fresh client: made on first use, and again for the call after one hung. */
  create: () => A;
  /** The longest a client's close is waited for (ms); a hung client's close runs in the background within it. */
  closeTimeoutMs?: number;
}

/**
 * One Kafka admin client, replaced when a call on it hangs. A request sent over a connection to a
 * broker that went silent waits out the client's request timeout and its retries, and the client
 * keeps using that connection: so a call unanswered within its bound answers `TIMED_OUT`, the
 * client is dropped (closed in the background, never waited on past `closeTimeoutMs`) and the
 * next call runs on a fresh one. A call that fails outright keeps the client.
 */
export class ReplaceableAdmin<A extends ClosableClient> {
  private readonly o: ReplaceableAdminOptions<A>;
  private current: A | undefined;
  private closed = false;

  constructor(o: ReplaceableAdminOptions<A>) {
    this.o = o;
  }

  /**
   * Runs `call` on the client, waiting at most `timeoutMs`: its answer, its rejection, or
   * `TIMED_OUT` (the client it ran on is then replaced, unless another hung call already did).
   */
  async run<T>(call: (admin: A) => Promise<T>, timeoutMs: number): Promise<T | typeof TIMED_OUT> {
    if (this.closed) throw new Error("the admin client is closed");
    this.current ??= this.o.create();
    const admin = this.current;
    const outcome = await withTimeout(call(admin), timeoutMs);
    if (outcome === TIMED_OUT && this.current === admin) {
      this.current = undefined;
      void this.closeWithin(admin);
    }
    return outcome;
  }

  /** Closes the client in use (waiting at most `closeTimeoutMs`); a call after this rejects. */
  async close(): Promise<void> {
    this.closed = true;
    const admin = this.current;
    this.current = undefined;
    if (admin) await this.closeWithin(admin);
  }

  /** Closes a client, waiting at most `closeTimeoutMs`; a failed close is of no interest (the client is dropped). */
  private async closeWithin(admin: A): Promise<void> {
    try {
      await withTimeout(admin.close(), this.o.closeTimeoutMs ?? 10_000);
    } catch {}
  }
}
