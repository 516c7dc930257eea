import type { ApiKeyRecord, ApiRole } from "@evb/storage";

/**
 * The role each operation needs (docs/security.md). Reads need `read`; publish `publish`;
 * subscribe and unSubscribe `subscribe`. Opening a topic is part of publishing (the publisher
 * creates the topic it writes to, as in the original's examples); closing one, and releasing dead
 * letters, change what others see and need `admin`. `admin` holds every role. An operation not
 * listed here (an unknown path) needs `read`, so a key answers it as the variant does.
 */
const WRITES: Readonly<Record<string, ApiRole>> = {
  "rest/publish": "publish",
  "rest/open": "publish",
  "rest/subscribe": "subscribe",
  "rest/unSubscribe": "subscribe",
  "rest/close": "admin",
  "admin/replayDeadLetters": "admin",
  // Receivers' answers (excerpts) of any subscription in any group: not for every reader.
  "admin/deliveryAttempts": "admin",
};

/** Operations that touch no one group, so a key of any group may call them. */
const GROUPLESS = new Set(["admin/getVersion", "admin/listGroup", "admin/listNodes", "admin/validateGroupId"]);

/** Operations that act on every group unless a `groupId` narrows them (replayDeadLetters never does). */
const ALL_GROUPS_UNLESS_NAMED = new Set(["admin/deadLetters"]);
const ALL_GROUPS = new Set(["admin/replayDeadLetters", "admin/deliveryAttempts"]);

export function requiredRole(path: string): ApiRole {
  return WRITES[path] ?? "read";
}

/**
 * The group an operation call touches, for the key's group scope: its `groupId` (absent or blank
 * means group "1", as in the interface), `*` when it spans every group, null when it has none.
 */
export function operationGroup(path: string, groupId: string | undefined): string | null {
  if (GROUPLESS.has(path)) return null;
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
