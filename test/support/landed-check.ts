import { expect } from "vitest";
import { call } from "./http.ts";
import { type LedgerReport, verifyLedger } from "./ledger-integrity.ts";
import { type PublishOutcome, waitUntil } from "./publish-stream.ts";
import type { TestSystem } from "./system.ts";

/**
 * The core invariant after a crash: every publish that was answered SUCCESS or TIMEOUT is in
 * the ledger exactly once, every SUCCESS eventId names that very publish and `getEvent` returns
 * it, and the ledger of group 1 passes `verifyLedger`. Waits (bounded) for late events first.
 */
export async function expectEveryPublishLandedOnce(sys: TestSystem, outcomes: readonly PublishOutcome[]): Promise<LedgerReport> {
  const unanswered = outcomes.filter((o) => o.status !== "SUCCESS" && o.status !== "TIMEOUT");
  expect(unanswered, "every publish answers SUCCESS or TIMEOUT").toEqual([]);

  const topics = [...new Set(outcomes.map((o) => o.topic))];
  const base = sys.gatewayUrl;
  await waitUntil(`the ${outcomes.length} publishes are counted in the topics' state`, async () => {
    let total = 0;
    for (const topic of topics) {
      const r = await call(base, "/event-broker/rest/state", { topic });
      total += (r.json as { data?: { sequenceNumber?: number } }).data?.sequenceNumber ?? 0;
    }
    return total >= outcomes.length;
  });

  const report = await verifyLedger({ databaseUrl: sys.env.DATABASE_URL as string, schema: sys.env.DATABASE_SCHEMA as string });
  expect(report.problems).toEqual([]);
  const byContent = new Map<string, number>();
  for (const e of report.events) byContent.set(e.content, (byContent.get(e.content) ?? 0) + 1);
  const missing = outcomes.filter((o) => byContent.get(o.content) !== 1).map((o) => `${o.i} ${o.status} x${byContent.get(o.content) ?? 0}`);
  expect(missing, "publishes not in the ledger exactly once").toEqual([]);
  expect(report.events).toHaveLength(outcomes.length);

  const byId = new Map(report.events.map((e) => [e.eventId, e]));
  const misrouted = outcomes
    .filter((o) => o.status === "SUCCESS")
    .filter((o) => byId.get(o.eventId as string)?.content !== o.content || byId.get(o.eventId as string)?.topic !== o.topic)
    .map((o) => `${o.i}: ${o.eventId}`);
  expect(misrouted, "SUCCESS eventIds that name another event").toEqual([]);

  const acked = outcomes.filter((o) => o.status === "SUCCESS");
  const unreadable: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < acked.length) {
        const o = acked[next++] as PublishOutcome;
        const r = await call(o.gateway, "/event-broker/rest/getEvent", { eventId: o.eventId as string });
        const data = (r.json as { data?: { content?: string; topic?: string } }).data;
        if (data?.content !== Buffer.from(o.content, "utf8").toString("base64") || data.topic !== o.topic)
          unreadable.push(`${o.eventId}: ${r.text}`);
      }
    }),
  );
  expect(unreadable, "acknowledged events getEvent cannot return").toEqual([]);
  return report;
}
