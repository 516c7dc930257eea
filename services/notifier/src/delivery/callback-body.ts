import type { MatchRule } from "@evb/domain";
import type { BacklogItem } from "@evb/storage";

/**
 * The callback body (behaviour.md 8.4), keys in the original's order:
 * {"subscriptionId","event":{"topic","content"(Base64),"extensions","eventId"}}. Subscriptions
 * taken through variant E get no `extensions` key, as E's Event has none.
 */
export function callbackBody(
  subscriptionId: string,
  item: Pick<BacklogItem, "topic" | "content" | "extensions" | "eventId">,
  variant: MatchRule,
): string {
  const content = item.content.toString("base64");
  const event =
    variant === "E"
      ? { topic: item.topic, content, eventId: item.eventId }
      : { topic: item.topic, content, extensions: item.extensions, eventId: item.eventId };
  return JSON.stringify({ subscriptionId, event });
}
