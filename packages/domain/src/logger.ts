/** The logging port libraries take; services pass a pino logger. */
export interface Logger {
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  /** A logger that adds `bindings` (e.g. `{ component }`, `{ requestId }`) to every line (pino has it; fakes may not). */
  child?(bindings: Record<string, unknown>): Logger;
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
