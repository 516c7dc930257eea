import type { PositionedRecord } from "@evb/domain";
import { endSpan, type Span, SpanKind, startSpan, traceparentOf } from "@evb/telemetry";

/** The spans of one seal, ended together once the seal commits or fails. */
export interface SealTrace {
  /** The records to seal, each carrying its own `seal record` span's traceparent for the ledger. */
  records: PositionedRecord[];
  end(err?: unknown): void;
}

/**
 * One seal covers many publishes, each with its own trace: the `seal` span links to every
 * record's producer span (up to MAX_LINKS), and each traced record gets a `seal record` child
 * span in its publish's trace, whose traceparent is stored with the event so that the
 * notifier's spans continue that trace. Only called with tracing on.
 */
export function traceSeal(groupId: string, records: readonly PositionedRecord[]): SealTrace {
  const seal = startSpan(`seal ${groupId}`, {
    links: records.map((r) => r.traceparent),
    attributes: { "evb.group": groupId, "evb.records": records.length },
  });
  const children: Span[] = [];
  const traced = records.map((r) => {
    if (r.traceparent === undefined) return r;
    const child = startSpan("seal record", {
      kind: SpanKind.CONSUMER,
      parent: r.traceparent,
      attributes: {
        "messaging.system": "kafka",
        "messaging.operation.type": "process",
        "evb.group": groupId,
        "evb.topic": r.record?.topic ?? "",
        "messaging.kafka.offset": r.offset,
      },
    });
    if (!child) return r;
    if (seal) child.setAttribute("evb.seal_span_id", seal.spanContext().spanId);
    children.push(child);
    return { ...r, traceparent: traceparentOf(child) };
  });
  return {
    records: traced,
    end(err) {
      for (const c of children) endSpan(c, err);
      endSpan(seal, err);
    },
  };
}
