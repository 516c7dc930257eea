/** What `withTimeout` answers when the time ran out first. */
export const TIMED_OUT: unique symbol = Symbol("timed out");

/**
 * Races `p` against `ms`. The loser is not cancelled (a DNS lookup or a queued Redis command
 * cannot be), only no longer waited for; a late rejection of `p` is swallowed.
 */
export async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), Math.max(0, ms));
  });
  p.catch(() => {});
  try {
    return await Promise.race([p, expired]);
  } finally {
    clearTimeout(timer);
  }
}
