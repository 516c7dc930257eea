import type { ApiKeyRecord, ApiRole } from "@evb/storage";
import type { OperationAccess } from "./operation.ts";

/**
 * The role a call needs: what its operation declares, `read` when it declares none
 * (docs/security.md). `admin` holds every role. (An unknown path is answered before
 * authorization, as the variant answers it.)
 */
export function requiredRole(op: OperationAccess): ApiRole {
  return op.role ?? "read";
}

/**
 * The group an operation call touches, for the key's group scope, by the operation's declared
 * `groupScope`: its `groupId` (absent or blank means group "1", as in the interface), `*` when it
 * spans every group, null when it has none.
 */
export function operationGroup(op: OperationAccess, groupId: string | undefined): string | null {
  const scope = op.groupScope ?? "named";
  if (scope === "groupless") return null;
  if (scope === "group-one") return "1";
  if (scope === "all") return "*";
  const named = groupId !== undefined && groupId.trim() !== "";
  if (scope === "all-unless-named" && !named) return "*";
  return named ? (groupId as string) : "1";
}

/** Whether a key may make this call: it holds the role (or admin) and its groups cover the group. */
export function keyPermits(key: Pick<ApiKeyRecord, "roles" | "groups">, role: ApiRole, group: string | null): boolean {
  if (!key.roles.includes(role) && !key.roles.includes("admin")) return false;
  if (group === null || key.groups.includes("*")) return true;
  return group !== "*" && key.groups.includes(group);
}
