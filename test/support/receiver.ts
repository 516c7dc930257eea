import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status this receiver answered. */
  status: number;
  receivedAt: number;
}

/** How to answer one request: a status, optional headers, optional delay before answering. */
export interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** Body of the answer (default "ok"). */
  body?: string;
  delayMs?: number;
}

export interface CallbackEvent {
  topic: string;
  content: string;
  extensions?: Record<string, string>;
  eventId: string;
}

/**
 * A real HTTP callback receiver on 127.0.0.1 for tests: records every request, answers 200 by
 * default, and can be told to fail, delay or answer per request (`answer`).
 */
export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  /** Decides each answer; replace it to make the receiver fail, slow or recover. */
  answer: (req: { n: number; body: string }) => Answer = () => ({ status: 200 });
  private readonly server: Server;
  private port = 0;
  private waiters: Array<() => void> = [];

  private constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        const a = this.answer({ n: this.requests.length, body });
        const reply = () => {
          this.requests.push({
            method: req.method ?? "",
            path: req.url ?? "",
            headers: req.headers,
            body,
            status: a.status,
            receivedAt: Date.now(),
          });
          res.writeHead(a.status, { "content-type": "text/plain", ...a.headers }).end(a.body ?? "ok");
          for (const w of this.waiters.splice(0)) w();
        };
        if (a.delayMs) setTimeout(reply, a.delayMs);
        else reply();
      });
    });
  }

  /** A receiver on `port` (0: any free one; a given one to bring back a receiver that was down). */
  static async start(port = 0): Promise<Receiver> {
    const r = new Receiver();
    await new Promise<void>((resolve) => r.server.listen(port, "127.0.0.1", resolve));
    r.port = (r.server.address() as AddressInfo).port;
    return r;
  }

  url(path = "/callback"): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Bodies of the requests answered 2xx, in arrival order. */
  delivered(): { subscriptionId: string; event: CallbackEvent }[] {
    return this.requests.filter((r) => r.status >= 200 && r.status < 300).map((r) => JSON.parse(r.body));
  }

  /** Event ids delivered (2xx), first occurrence only, in arrival order. */
  deliveredIds(subscriptionId?: string): string[] {
    const seen = new Set<string>();
    const out: string[] = [];
    for (const d of this.delivered()) {
      if (subscriptionId && d.subscriptionId !== subscriptionId) continue;
      if (seen.has(d.event.eventId)) continue;
      seen.add(d.event.eventId);
      out.push(d.event.eventId);
    }
    return out;
  }

  /** Waits until `done()` holds, re-checking on every request; throws with `what` after `timeoutMs`. */
  async until(done: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`receiver: timed out waiting for ${what} (${this.requests.length} requests so far)`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 500));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
