export {
  formatTraceparent,
  parseTraceparent,
  TRACEPARENT,
  type TraceParent,
  traceparentHeaders,
  traceparentOfHeaders,
} from "./traceparent.ts";
export {
  activeTraceIds,
  addLinks,
  endSpan,
  flushTracing,
  MAX_LINKS,
  nameServerSpan,
  SpanKind,
  type SpanOptions,
  startSpan,
  traceparentOf,
  tracingOn,
  useTracer,
  withSpan,
} from "./tracing.ts";
export type { Span } from "@opentelemetry/api";
