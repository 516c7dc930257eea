import type { Logger } from "@evb/domain";
import { flushTracing } from "@evb/telemetry";
import { closeOnSignal, exitOnStartFailure } from "./process-exit.ts";
import { createServiceLogger } from "./service-logger.ts";

/** Longest a closing service waits for its last spans to be exported (ms). */
const FLUSH_TRACES_MS = 2_000;

/**
 * The `main` of every service: parse the environment (a bad value exits 1 naming the variable
 * and the fix), start, and close on SIGTERM/SIGINT.
 */
export function runService<C extends { LOG_LEVEL: string }>(
  name: string,
  load: () => C,
  start: (config: C, logger: Logger) => Promise<{ close(): Promise<void> }>,
  base: (config: C) => Record<string, unknown> = () => ({}),
): void {
  let config: C;
  try {
    config = load();
  } catch (err) {
    exitOnStartFailure(name, err);
  }
  const logger = createServiceLogger(name, config.LOG_LEVEL, base(config));
  start(config, logger)
    .then((svc) =>
      closeOnSignal(async () => {
        await svc.close();
        // The spans of the last moments (nothing when tracing is off), bounded: a collector
        // that does not answer must not hold the exit.
        await flushTracing(FLUSH_TRACES_MS);
      }, logger),
    )
    .catch((err) => exitOnStartFailure(name, err));
}
