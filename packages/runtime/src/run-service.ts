import { closeOnSignal, createServiceLogger, exitOnStartFailure } from "@evb/config";
import type { Logger } from "@evb/domain";

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
    .then((svc) => closeOnSignal(() => svc.close(), logger))
    .catch((err) => exitOnStartFailure(name, err));
}
