import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The topics the bed's publishers write (lane i to topic i mod 6) and the receiver subscribes to:
 * several, so that every log partition carries events and every indexer has some to seal.
 */
export const BED_TOPICS = Array.from({ length: 6 }, (_, i) => `bed.topic${i}`);

/** One acknowledged publish, as the publisher was told it. */
export interface Ack {
  key: string;
  content: string;
  eventId: string;
  /** ms since the epoch, when the SUCCESS answer arrived. */
  at: number;
  /** Tries it took (1: the first answer was SUCCESS). */
  tries: number;
}

export interface PublisherStats {
  acks: Ack[];
  /** Keys whose tries were answered SUCCESS with two different eventIds: an acknowledged event renamed. */
  renamed: string[];
  /** Answers that were neither SUCCESS nor a retryable failure, with their text (the first 20). */
  refused: string[];
  /** Failed tries by cause (`TIMEOUT`, `HTTP 503`, `network`…). */
  failures: Map<string, number>;
}

/**
 * Publishers with client-side fail-over: each lane publishes one event at a time with an
 * `Idempotency-Key`, and retries every try that did not end in SUCCESS (a TIMEOUT answer, an
 * error status, no answer within `tryTimeoutMs`) with the same key on the next gateway, until it
 * is acknowledged. With idempotent publish, a retry never stores a second event.
 */
export class Publisher {
  readonly stats: PublisherStats = { acks: [], renamed: [], refused: [], failures: new Map() };
  private running = true;
  private readonly lanes: Promise<void>[] = [];
  private seq = 0;
  private readonly gateways: readonly string[];
  private readonly opts: { lanes: number; pauseMs: number; tryTimeoutMs: number; tag: string };

  constructor(gateways: readonly string[], opts: { lanes: number; pauseMs: number; tryTimeoutMs: number; tag: string }) {
    this.gateways = gateways;
    this.opts = opts;
    for (let lane = 0; lane < opts.lanes; lane++) this.lanes.push(this.lane(lane));
  }

  private fail(cause: string): void {
    this.stats.failures.set(cause, (this.stats.failures.get(cause) ?? 0) + 1);
  }

  private async lane(lane: number): Promise<void> {
    let gw = lane % this.gateways.length;
    while (this.running) {
      const key = `${this.opts.tag}-${lane}-${this.seq++}`;
      const content = `content of ${key}`;
      const seen = new Set<string>();
      for (let tries = 1; ; tries++) {
        const answer = await this.try(this.gateways[gw] as string, BED_TOPICS[lane % BED_TOPICS.length] as string, key, content);
        if (answer.eventId) {
          seen.add(answer.eventId);
          if (seen.size > 1) this.stats.renamed.push(key);
          this.stats.acks.push({ key, content, eventId: answer.eventId, at: Date.now(), tries });
          break;
        }
        if (answer.refused) {
          if (this.stats.refused.length < 20) this.stats.refused.push(`${key}: ${answer.refused}`);
          break;
        }
        this.fail(answer.cause);
        // Fail over: the next try goes to the next gateway, after a short pause.
        gw = (gw + 1) % this.gateways.length;
        await new Promise((r) => setTimeout(r, 100));
        if (!this.running && tries > 50) break;
      }
      await new Promise((r) => setTimeout(r, this.opts.pauseMs));
    }
  }

  private async try(
    gateway: string,
    topic: string,
    key: string,
    content: string,
  ): Promise<{ eventId?: string; cause: string; refused?: string }> {
    try {
      const res = await fetch(`${gateway}/event-broker/rest/publish`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "idempotency-key": key },
        body: new URLSearchParams({ topic, content }).toString(),
        signal: AbortSignal.timeout(this.opts.tryTimeoutMs),
      });
      const text = await res.text();
      if (res.status !== 200) return { cause: `HTTP ${res.status}` };
      const body = JSON.parse(text) as { status?: string; eventId?: string; code?: number; message?: string };
      if (body.status === "SUCCESS" && body.eventId) return { eventId: body.eventId, cause: "" };
      if (body.status) return { cause: body.status };
      // An error envelope: retryable when it says the broker could not finish (timeouts, unavailability).
      return { cause: `code ${body.code}`, ...(/timeout|not available|unavailable/i.test(body.message ?? "") ? {} : { refused: text }) };
    } catch (err) {
      return { cause: (err as Error).name === "TimeoutError" ? "no answer" : "network" };
    }
  }

  /** Stops starting new publishes and waits until every lane's last publish is acknowledged. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.lanes);
  }
}

/** One callback as the receiver got it. */
export interface Delivery {
  eventId: string;
  at: number;
}

/** The bed's callback receiver, on the client host: records every callback and answers 200. */
export class CallbackReceiver {
  readonly deliveries: Delivery[] = [];
  private server: Server | undefined;

  async start(host: string): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        try {
          // Variant M's body wraps the event ({subscriptionId, event}); E's is the event itself.
          const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { eventId?: unknown; event?: { eventId?: unknown } };
          const eventId = body.event?.eventId ?? body.eventId;
          if (typeof eventId === "string") this.deliveries.push({ eventId, at: Date.now() });
        } catch {
          // not a callback of ours; answered all the same
        }
        res.end("ok");
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, host, resolve));
    return `http://${host}:${(this.server.address() as AddressInfo).port}/callback`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

/** What one `/readyz` answered at one moment (status 0: no answer within a second). */
export interface ReadySample {
  at: number;
  status: number;
  /** ms the answer took. */
  took: number;
  /** Why not ready, as the service said it (or the client error), when not 200. */
  reason?: string;
}

/** The `reason` of a readiness answer (a JSON body), or its first 200 characters. */
function readinessReason(body: string): string {
  try {
    const parsed = JSON.parse(body) as { reason?: unknown };
    if (typeof parsed.reason === "string") return parsed.reason;
  } catch {}
  return body.slice(0, 200);
}

/** Asks every service's `/readyz` twice a second, each with a 1 s deadline. */
export class ReadinessProber {
  readonly samples = new Map<string, ReadySample[]>();
  private readonly timer: NodeJS.Timeout;

  constructor(targets: ReadonlyMap<string, string>, everyMs = 500) {
    for (const name of targets.keys()) this.samples.set(name, []);
    this.timer = setInterval(() => {
      for (const [name, url] of targets) void this.probe(name, `${url}/readyz`);
    }, everyMs);
  }

  private async probe(name: string, url: string): Promise<void> {
    const start = Date.now();
    let status = 0;
    let reason: string | undefined;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      const body = await res.text();
      status = res.status;
      if (status !== 200) reason = readinessReason(body);
    } catch (err) {
      status = 0;
      reason = String(err);
    }
    this.samples.get(name)?.push({ at: start, status, took: Date.now() - start, ...(reason ? { reason } : {}) });
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
