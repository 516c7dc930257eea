import { call } from "./http.ts";

/** What one publish of a stream was told. */
export interface PublishOutcome {
  i: number;
  gateway: string;
  topic: string;
  content: string;
  /** The SendResult status, or `HTTP <status>` / `FAILED <error>` when no SendResult came back. */
  status: string;
  eventId: string | null;
  /** Ticks of one counter shared by the whole stream: A.completed < B.started means A ended before B began. */
  started: number;
  completed: number;
}

export interface PublishStreamOptions {
  /** Gateway base URLs; publish i goes to gateways[i % n]. */
  gateways: readonly string[];
  topics: readonly string[];
  count: number;
  /** Publishes in flight at once. */
  concurrency: number;
  /** Content of publish i; make it unique to find each publish in the ledger. */
  content: (i: number) => string;
  /** Publish path, default the L mount. */
  path?: string;
  /** Called after each publish completes, with how many have completed. */
  onOutcome?: (outcome: PublishOutcome, completed: number) => void;
}

/**
 * A bounded stream of concurrent publishes (POST form bodies) spread over gateways and topics.
 * Never throws for a failed publish: every publish yields an outcome, so a test can state what
 * must hold for each kind of answer.
 */
export async function publishStream(opts: PublishStreamOptions): Promise<PublishOutcome[]> {
  const outcomes: PublishOutcome[] = [];
  let next = 0;
  let tick = 0;
  const worker = async () => {
    while (next < opts.count) {
      const i = next++;
      const gateway = opts.gateways[i % opts.gateways.length] as string;
      const topic = opts.topics[i % opts.topics.length] as string;
      const content = opts.content(i);
      const started = tick++;
      let status: string;
      let eventId: string | null = null;
      try {
        const r = await call(gateway, opts.path ?? "/event-broker/rest/publish", { topic, content }, "POST");
        const body = r.json as { status?: unknown; eventId?: unknown } | undefined;
        if (r.status === 200 && typeof body?.status === "string") {
          status = body.status;
          eventId = typeof body.eventId === "string" ? body.eventId : null;
        } else {
          status = `HTTP ${r.status} ${r.text.slice(0, 200)}`;
        }
      } catch (err) {
        status = `FAILED ${String(err)}`;
      }
      const outcome = { i, gateway, topic, content, status, eventId, started, completed: tick++ };
      outcomes.push(outcome);
      opts.onOutcome?.(outcome, outcomes.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.concurrency, opts.count) }, worker));
  return outcomes.sort((a, b) => a.i - b.i);
}

/** Polls `probe` until it returns true; throws with `what` when the deadline passes. */
export async function waitUntil(what: string, probe: () => Promise<boolean>, timeoutMs = 60_000, everyMs = 250): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * A publish stream that sets off `outage` once `at` publishes have completed, and returns when
 * both the stream and the outage are over.
 */
export async function publishThroughOutage(
  opts: Omit<PublishStreamOptions, "onOutcome"> & { at: number; outage: () => Promise<void> },
): Promise<PublishOutcome[]> {
  let outage: Promise<void> = Promise.resolve();
  const outcomes = await publishStream({
    ...opts,
    onOutcome: (_o, completed) => {
      if (completed === opts.at) outage = opts.outage();
    },
  });
  await outage;
  return outcomes;
}
