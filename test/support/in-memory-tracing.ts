import { context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { useTracer } from "@evb/telemetry";

/** Tracing on for a unit test, each span kept in memory as it ends; `stop()` turns it off again. */
export interface InMemoryTracing {
  spans(): ReadableSpan[];
  reset(): void;
  stop(): void;
}

export function inMemoryTracing(): InMemoryTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const manager = new AsyncLocalStorageContextManager();
  context.setGlobalContextManager(manager.enable());
  useTracer(provider.getTracer("test"), () => provider.shutdown());
  return {
    spans: () => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    stop() {
      useTracer(undefined);
      manager.disable();
      context.disable();
    },
  };
}
