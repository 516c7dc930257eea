import { BrokerError, checkTopicName, TOPIC_MAX_LENGTH } from "@evb/domain";

/**
 * MQTT topic filters (MQTT 3.1.1 4.7, 5.0 4.7) over the broker's topic names. Levels are split
 * on `/` with empty levels kept (MQTT's rule, not Java's split); `+` stands for exactly one level,
 * `#` for the rest, zero levels included (`a/#` takes `a`); a wildcard in the first level never
 * takes a topic that starts with `$`. Pure.
 */

/** Whether a filter holds a wildcard (and so is never checked for existence). */
export function isWildcardFilter(filter: string): boolean {
  return filter.includes("+") || filter.includes("#");
}

/**
 * A filter's rules, first failure wins: a plain name follows the broker's topic rules (100102,
 * 100106, 100103); a wildcard filter is at most 64 characters of code units 32–128 (100102,
 * 100106), with every `+` a whole level and a single `#` as the whole last level (100109).
 */
export function checkFilter(filter: string): BrokerError | null {
  if (!isWildcardFilter(filter)) return checkTopicName(filter);
  if (filter.length > TOPIC_MAX_LENGTH) return BrokerError.of("TOPIC_TOO_LONG");
  for (let i = 0; i < filter.length; i++) {
    const c = filter.charCodeAt(i);
    if (c < 32 || c > 128) return BrokerError.of("TOPIC_INVALID_CHAR");
  }
  const levels = filter.split("/");
  for (const [i, level] of levels.entries()) {
    if (level.includes("+") && level !== "+") return BrokerError.of("PATTERN_INVALID");
    if (level.includes("#") && (level !== "#" || i !== levels.length - 1)) return BrokerError.of("PATTERN_INVALID");
  }
  return null;
}

/** Whether a (checked) filter takes an event topic. */
export function filterMatches(filter: string, topic: string): boolean {
  if (!isWildcardFilter(filter)) return filter === topic;
  if (topic.startsWith("$") && (filter.startsWith("+") || filter.startsWith("#"))) return false;
  const f = filter.split("/");
  const t = topic.split("/");
  for (let i = 0; i < f.length; i++) {
    const level = f[i];
    if (level === "#") return true;
    if (i >= t.length) return false;
    if (level !== "+" && level !== t[i]) return false;
  }
  return f.length === t.length;
}
