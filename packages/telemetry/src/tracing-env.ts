/** Whether the environment asks for traces: an OTLP endpoint, and the SDK not disabled. */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** `OTEL_SERVICE_NAME`, else `evb-<service>` from the entry point's path (`services/<service>/src/main.ts`), else `evb`. */
export function serviceNameOf(env: NodeJS.ProcessEnv, entry: string | undefined): string {
  const named = env.OTEL_SERVICE_NAME?.trim();
  if (named) return named;
  const m = /services[\\/]([^\\/]+)[\\/]src[\\/]main\.ts$/.exec(entry ?? "");
  return m ? `evb-${m[1]}` : "evb";
}
