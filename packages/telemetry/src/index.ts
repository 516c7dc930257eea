export {
  formatTraceparent,
  parseTraceparent,
  TRACEPARENT,
  type TraceParent,
  traceparentHeaders,
  traceparentOfHeaders,
} from "./traceparent.ts";
export {
  addLinks,
  endSpan,
  flushTracing,
  MAX_LINKS,
  SpanKind,
  type SpanOptions,
  startSpan,
  traceparentOf,
  tracingOn,
  useTracer,
  withSpan,
} from "./tracing.ts";
export type { Span } from "@opentelemetry/api";
