/** The exit codes of `evb`, documented in the README; scripts depend on them. */
export const EXIT = {
  /** Done. */
  OK: 0,
  /** The broker answered with an error code, a publish was not SUCCESS, or a signature did not verify. */
  REFUSED: 1,
  /** Bad command line: unknown command or flag, missing argument, an operation the variant lacks. */
  USAGE: 2,
  /** No broker reply: connection refused, DNS failure, timeout. */
  CONNECTION: 3,
  /** The broker's HTTP layer refused the call (401 credentials, 403 address, 404 unknown path) or replied with something unreadable. */
  HTTP: 4,
} as const;

/** A command-line mistake: printed with the usage hint, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}
