import {
  type Attributes,
  type Context,
  context,
  createTraceState,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { formatTraceparent, parseTraceparent } from "./traceparent.ts";

/**
 * The services' side of tracing: one flag the hot paths check, and spans made from and turned
 * into `traceparent` values. Until `useTracer` (called by `sdk.ts`, which only the preload loads,
 * and only when `OTEL_EXPORTER_OTLP_ENDPOINT` is set) every helper returns at once: no span, no
 * context lookup, no allocation, so tracing off costs one comparison per call.
 */
let tracer: Tracer | undefined;
let shutdown: (() => Promise<void>) | undefined;

/** Turns tracing on for this process (the SDK bootstrap, once); `undefined` turns it off again (tests). */
export function useTracer(t: Tracer | undefined, flushAndStop?: () => Promise<void>): void {
  tracer = t;
  shutdown = t ? flushAndStop : undefined;
}

/** Whether spans are made and exported: the one check a hot path makes before any tracing work. */
export function tracingOn(): boolean {
  return tracer !== undefined;
}

/** Exports what is buffered and stops the exporter, waiting at most `timeoutMs`; nothing when tracing is off. */
export async function flushTracing(timeoutMs: number): Promise<void> {
  if (!shutdown) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  await Promise.race([shutdown().catch(() => {}), late]);
  clearTimeout(timer);
}

export { SpanKind };

/**
 * A span whose parent is `traceparent` (a remote one: a Kafka record's, a ledger row's, a
 * client's), with the W3C `tracestate` that came with it, if any.
 */
function contextOf(traceparent: string | null | undefined, tracestate?: string): Context | undefined {
  const p = parseTraceparent(traceparent);
  if (!p) return undefined;
  const traceState = tracestate?.trim() ? createTraceState(tracestate) : undefined;
  return trace.setSpanContext(ROOT_CONTEXT, { ...p, isRemote: true, ...(traceState ? { traceState } : {}) });
}

/** Most links one span carries: a seal of thousands of records links the first ones. */
export const MAX_LINKS = 128;

function linksOf(traceparents: Iterable<string | null | undefined>): Link[] {
  const links: Link[] = [];
  const seen = new Set<string>();
  for (const tp of traceparents) {
    if (links.length >= MAX_LINKS) break;
    const p = tp && !seen.has(tp) ? parseTraceparent(tp) : undefined;
    if (!p || !tp) continue;
    seen.add(tp);
    links.push({ context: { ...p, isRemote: true } });
  }
  return links;
}

export interface SpanOptions {
  kind?: SpanKind;
  /** The parent's traceparent; without a valid one the span is a child of the active context. */
  parent?: string | null | undefined;
  /** The W3C tracestate sent with `parent` (a client's); ignored without a valid parent. */
  tracestate?: string | undefined;
  /** Traceparents the span links to (one per record of a seal, per event of a dispatch), at most `MAX_LINKS`. */
  links?: Iterable<string | null | undefined>;
  attributes?: Attributes;
  /** Epoch ms the span started at, when earlier than now. */
  startTime?: number;
}

/** Starts a span, or returns undefined when tracing is off. End it with `endSpan`. */
export function startSpan(name: string, o: SpanOptions = {}): Span | undefined {
  if (!tracer) return undefined;
  const parent = contextOf(o.parent, o.tracestate) ?? context.active();
  const links = o.links ? linksOf(o.links) : undefined;
  return tracer.startSpan(name, { kind: o.kind ?? SpanKind.INTERNAL, attributes: o.attributes, links, startTime: o.startTime }, parent);
}

/** Links `span` to the spans of `traceparents` (up to MAX_LINKS), once it knows which they are. */
export function addLinks(span: Span | undefined, traceparents: Iterable<string | null | undefined>): void {
  if (span) span.addLinks(linksOf(traceparents));
}

/** The span's context as a traceparent (what goes into a Kafka header or a ledger row). */
export function traceparentOf(span: Span): string {
  return formatTraceparent(span.spanContext());
}

/** Ends the span, marked as failed when `err` is given. */
export function endSpan(span: Span | undefined, err?: unknown): void {
  if (!span) return;
  if (err !== undefined) {
    span.recordException(err instanceof Error ? err : String(err));
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  }
  span.end();
}

/** Runs `fn` with `span` active, so the spans it causes (an HTTP client's) are its children. */
export function withSpan<T>(span: Span | undefined, fn: () => T): T {
  return span ? context.with(trace.setSpan(context.active(), span), fn) : fn();
}

/**
 * The ids of the span active here, for a log line (`trace_id`, `span_id`: the names log
 * backends join traces on); undefined when tracing is off or no span is active.
 */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  if (!tracer) return undefined;
  const sc = trace.getSpanContext(context.active());
  if (!sc || !trace.isSpanContextValid(sc)) return undefined;
  return { trace_id: sc.traceId, span_id: sc.spanId };
}

/**
 * Names the active HTTP server span after its route (`POST /event-m/rest/publish`) rather than
 * the method alone, and sets `http.route`: the operation a trace is about is then read from its
 * root. Only a route the gateway serves is named (a path a client made up is no route).
 */
export function nameServerSpan(method: string, route: string): void {
  if (!tracer) return;
  const span = trace.getActiveSpan();
  if (!span) return;
  span.updateName(`${method} ${route}`);
  span.setAttribute("http.route", route);
}
