/**
 * `node --import <this file> services/<name>/src/main.ts`: starts tracing before the service's
 * modules load, when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is
 * set and `OTEL_SDK_DISABLED` is not `true`. Otherwise it does nothing: the SDK and the
 * instrumentations are never imported, so a service without an endpoint runs as if this file
 * were not there. devstack's service processes and the image start every service through it.
 */
import { serviceNameOf, tracingWanted } from "./tracing-env.ts";

if (tracingWanted(process.env)) {
  const { startTracing } = await import("./sdk.ts");
  await startTracing(serviceNameOf(process.env, process.argv[1]));
}
