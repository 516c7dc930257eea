import { BrokerError } from "./errors.ts";
import { isBlank } from "./text.ts";

export const TOPIC_MAX_LENGTH = 64;

/**
 * Validates a topic name in the order behaviour.md 5.1 gives (E late, M, L): blank (100103),
 * longer than 64 UTF-16 code units (100102), trailing `/` (100106), a code unit outside
 * [32, 128] or a `+`/`#` (100106). Returns the error, or null when the name is valid.
 */
export function checkTopicName(topic: string): BrokerError | null {
  if (isBlank(topic)) return BrokerError.of("TOPIC_BLANK");
  if (topic.length > TOPIC_MAX_LENGTH) return BrokerError.of("TOPIC_TOO_LONG");
  if (topic.endsWith("/")) return BrokerError.of("TOPIC_INVALID_CHAR");
  for (let i = 0; i < topic.length; i++) {
    const c = topic.charCodeAt(i);
    if (c < 32 || c > 128 || c === 0x2b /* + */ || c === 0x23 /* # */) return BrokerError.of("TOPIC_INVALID_CHAR");
  }
  return null;
}

/** True when the string is a wildcard pattern rather than a plain topic name. */
export function isPattern(topic: string): boolean {
  return topic.includes("+") || topic.includes("#");
}
