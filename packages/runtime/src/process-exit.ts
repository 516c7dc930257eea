/**
 * Runs `close` once on SIGTERM or SIGINT, then exits. A second signal exits at once, and a
 * close that outlives `graceMs` (a dependency that no longer answers) exits 1, so an operator
 * or orchestrator is never stuck behind a hung close.
 */
export function closeOnSignal(
  close: () => Promise<void>,
  logger: { info(m: string): void; error(o: object, m: string): void },
  graceMs = 20_000,
): void {
  let closing = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (closing) process.exit(1);
    closing = true;
    logger.info(`${signal} received, closing`);
    setTimeout(() => {
      logger.error({ graceMs }, "close did not finish in time; exiting anyway");
      process.exit(1);
    }, graceMs).unref();
    close()
      .then(() => process.exit(0))
      .catch((err) => {
        logger.error({ err }, "close failed");
        process.exit(1);
      });
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}

/** Prints a start-up failure (bad config, unreachable dependency) without a stack wall and exits 1. */
export function exitOnStartFailure(service: string, err: unknown): never {
  const msg = err instanceof Error ? err.message : String(err);
  process.stderr.write(`${service}: failed to start: ${msg}\n`);
  process.exit(1);
}
