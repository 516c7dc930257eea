import { register } from "node:module";
import { context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { registerInstrumentations } from "@opentelemetry/instrumentation";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { IORedisInstrumentation } from "@opentelemetry/instrumentation-ioredis";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider } from "@opentelemetry/sdk-trace";
import { createAddHookMessageChannel } from "import-in-the-middle";
import { useTracer } from "./tracing.ts";

/** Polled paths: a span per probe or scrape would drown the traces worth reading. */
const QUIET_PATHS = new Set(["/livez", "/readyz", "/health", "/metrics"]);
/** The web console's static files (its calls to the admin operations go to the mounts and are traced). */
const CONSOLE_FILES = "/console";

/** Requests that start no trace: probes, scrapes and the console's pages, scripts and styles. */
function quiet(path: string): boolean {
  return QUIET_PATHS.has(path) || path === CONSOLE_FILES || path.startsWith(`${CONSOLE_FILES}/`);
}

function pathOf(url: string | undefined): string {
  const q = url?.indexOf("?") ?? -1;
  return q >= 0 ? (url as string).slice(0, q) : (url ?? "");
}

/**
 * The share of new traces kept, `OTEL_TRACES_SAMPLER_ARG` (0–1, default 1: every publish). A span
 * with a parent follows its parent's decision, so a trace is kept or dropped whole, across the
 * services (the decision travels in the traceparent's flags).
 */
function sampler(): ParentBasedSampler {
  const ratio = Number(process.env.OTEL_TRACES_SAMPLER_ARG ?? "1");
  return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(Number.isFinite(ratio) ? Math.min(1, Math.max(0, ratio)) : 1) });
}

function numberFromEnv(name: string, fallback: number): number {
  const n = Number(process.env[name]);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

/**
 * Starts the OpenTelemetry SDK: W3C trace context, spans batched to the OTLP/HTTP (JSON)
 * exporter at `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/traces` appended; the exporter reads its own
 * `OTEL_EXPORTER_OTLP_*` variables), and the http, pg and ioredis instrumentations. Must run
 * before those modules are imported: the ESM loader hook only wraps modules loaded after it,
 * and only the ones an instrumentation asked for (the message channel).
 */
export async function startTracing(serviceName: string): Promise<void> {
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register("import-in-the-middle/hook.mjs", import.meta.url, registerOptions);
  const exporter = new OTLPTraceExporter();
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": serviceName }),
    sampler: sampler(),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter,
        scheduledDelayMillis: numberFromEnv("OTEL_BSP_SCHEDULE_DELAY", 5_000),
        maxQueueSize: numberFromEnv("OTEL_BSP_MAX_QUEUE_SIZE", 2_048),
        maxExportBatchSize: numberFromEnv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512),
      }),
    ],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({ ignoreIncomingRequestHook: (req) => quiet(pathOf(req.url)) }),
      // Only queries and commands inside a trace (a request, a seal, a dispatch run, a callback):
      // the background loops (readiness every 0.25 s, heartbeats, metrics polls, the Redis
      // silence watch) would otherwise start a trace of their own per query (ioredis's default).
      new PgInstrumentation({ requireParentSpan: true }),
      new IORedisInstrumentation({ requireParentSpan: true }),
    ],
  });
  await waitForAllMessagesAcknowledged();
  useTracer(provider.getTracer("evb"), () => provider.shutdown());
}
