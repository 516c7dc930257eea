import type { z } from "zod";

/**
 * A Kafka message's value as `schema` says, or null for anything else (no value, not JSON, another
 * kind of record): the chain and subscriptions topics hold several kinds side by side, and an
 * unreadable message is skipped, never a crash.
 */
export function decodeJsonRecord<S extends z.ZodType>(schema: S, value: Buffer | null): z.infer<S> | null {
  if (!value) return null;
  try {
    const parsed = schema.safeParse(JSON.parse(value.toString("utf8")));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
