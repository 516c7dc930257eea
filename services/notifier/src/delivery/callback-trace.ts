import type { BacklogItem } from "@evb/storage";
import { endSpan, startSpan, TRACEPARENT, traceparentOf, withSpan } from "@evb/telemetry";
import type { PostResult } from "./callback-transport.ts";

/**
 * One callback attempt under a `callback attempt` span in the trace of the event's publish (its
 * parent is the traceparent stored with the event). The POST carries a `traceparent` header
 * naming the attempt: the HTTP client span of instrumentation-http, a child of this span,
 * replaces it with its own when that instrumentation is on. The result carries the attempt span's
 * traceparent, which an alert the attempt raises continues. Only called with tracing on.
 */
export function tracedAttempt(
  subscriptionId: string,
  item: Pick<BacklogItem, "eventId" | "traceparent">,
  post: (traceHeaders: Record<string, string>) => Promise<PostResult>,
): Promise<PostResult> {
  const span = startSpan("callback attempt", {
    parent: item.traceparent,
    attributes: { "evb.subscription_id": subscriptionId, "evb.event_id": item.eventId },
  });
  const headers: Record<string, string> = span ? { [TRACEPARENT]: traceparentOf(span) } : {};
  return withSpan(span, () => post(headers)).then(
    (r) => {
      span?.setAttributes({ "evb.delivered": r.delivered, ...(r.status === null ? {} : { "http.response.status_code": r.status }) });
      endSpan(span, r.delivered ? undefined : new Error(r.error));
      return span ? { ...r, traceparent: headers[TRACEPARENT] } : r;
    },
    (err: unknown) => {
      endSpan(span, err);
      throw err;
    },
  );
}
