import type { RecordHeaders } from "@evb/eventlog";
import { endSpan, SpanKind, startSpan, traceparentHeaders, traceparentOf } from "@evb/telemetry";

/**
 * A publish's Kafka append under a producer span (a child of the request's HTTP server span, or
 * of the trace context a STOMP or MQTT client sent: `parent`), whose traceparent travels in the
 * record's headers to the indexer. Only called with tracing on (`tracingOn()`); the span ends
 * when the brokers acknowledge or refuse the record.
 */
export function tracedAppend(
  logTopic: string,
  topic: string,
  append: (headers: RecordHeaders | undefined) => Promise<void>,
  parent?: { traceparent: string; tracestate?: string | undefined },
): Promise<void> {
  const span = startSpan(`publish ${logTopic}`, {
    kind: SpanKind.PRODUCER,
    parent: parent?.traceparent,
    tracestate: parent?.tracestate,
    attributes: {
      "messaging.system": "kafka",
      "messaging.operation.type": "send",
      "messaging.destination.name": logTopic,
      "evb.topic": topic,
    },
  });
  return append(span && traceparentHeaders(traceparentOf(span))).then(
    () => endSpan(span),
    (err: unknown) => {
      endSpan(span, err);
      throw err;
    },
  );
}
