import type { ApiKeyRecord, ApiRole } from "@evb/storage";

/**
 * The role each operation needs (docs/security.md). Reads need `read`; publish `publish`;
 * subscribe and unSubscribe `subscribe`. Opening a topic is part of publishing (the publisher
 * creates the topic it writes to, as in the original's examples); closing one, and releasing dead
 * letters, change what others see and need `admin`. `admin` holds every role. Everything else
 * needs `read`. (An unknown path is answered before authorization, as the variant answers it.)
 */
const WRITES: Readonly<Record<string, ApiRole>> = {
  "rest/publish": "publish",
  "rest/open": "publish",
  "rest/subscribe": "subscribe",
  "rest/unSubscribe": "subscribe",
  // The owner's key changes its subscription's settings (or an admin key; the handler checks which).
  "admin/subscriptionSettings": "subscribe",
  "rest/close": "admin",
  "admin/replayDeadLetters": "admin",
  // Receivers' answers (excerpts) of any subscription in any group: not for every reader.
  "admin/deliveryAttempts": "admin",
  // Sends an event again to someone's receiver.
  "admin/resendEvent": "admin",
  // Receivers' URLs and answers of every subscription of the event's group.
  "admin/eventDeliveries": "admin",
};

/**
 * Operations that touch no one group, so a key of any group may call them. unSubscribe takes no
 * group (behaviour.md 8.5) and names its subscription by id: with keys on, a key ends only the
 * subscriptions it owns (SubscriptionStore.unsubscribe), which it made in a group it covers, so
 * the role is checked here and ownership by the store.
 */
const GROUPLESS = new Set([
  "admin/batch",
  "admin/getVersion",
  "admin/listGroup",
  "admin/listNodes",
  "admin/validateGroupId",
  "rest/unSubscribe",
]);

/** Operations that always act on group 1 and ignore any `groupId` (E's blockchaininfo). */
const GROUP_ONE = new Set(["admin/blockchaininfo"]);

/** Operations that act on every group unless a `groupId` narrows them (replayDeadLetters never does). */
const ALL_GROUPS_UNLESS_NAMED = new Set(["admin/deadLetters"]);
const ALL_GROUPS = new Set(["admin/replayDeadLetters", "admin/deliveryAttempts", "admin/resendEvent"]);

export function requiredRole(path: string): ApiRole {
  return WRITES[path] ?? "read";
}

/**
 * The group an operation call touches, for the key's group scope: its `groupId` (absent or blank
 * means group "1", as in the interface), `*` when it spans every group, null when it has none.
 */
export function operationGroup(path: string, groupId: string | undefined): string | null {
  if (GROUPLESS.has(path)) return null;
  if (GROUP_ONE.has(path)) return "1";
  if (ALL_GROUPS.has(path)) return "*";
  const named = groupId !== undefined && groupId.trim() !== "";
  if (ALL_GROUPS_UNLESS_NAMED.has(path) && !named) return "*";
  return named ? (groupId as string) : "1";
}

/** Whether a key may make this call: it holds the role (or admin) and its groups cover the group. */
export function keyPermits(key: Pick<ApiKeyRecord, "roles" | "groups">, role: ApiRole, group: string | null): boolean {
  if (!key.roles.includes(role) && !key.roles.includes("admin")) return false;
  if (group === null || key.groups.includes("*")) return true;
  return group !== "*" && key.groups.includes(group);
}
