/** The logging port libraries take; services pass a pino logger. */
export interface Logger {
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  /** A logger that adds `bindings` (e.g. `{ component }`, `{ requestId }`) to every line (pino has it; fakes may not). */
  child?(bindings: Record<string, unknown>): Logger;
}

/**
 * What a log line carries of a failure logged on every retry of an expected outage (Postgres,
 * Redis or Kafka away, a connection dropped): its message alone, under `err`. Anything else
 * logs `{ err }`, which pino serializes with type, message and stack (ARCHITECTURE.md, Logging
 * a failure).
 */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** `logger.child(bindings)`, or `logger` itself when it cannot make children (a test fake). */
export function childLogger(logger: Logger, bindings: Record<string, unknown>): Logger {
  return logger.child ? logger.child(bindings) : logger;
}

export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};
