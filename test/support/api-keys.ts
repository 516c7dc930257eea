import { type ApiKeyStore, type ApiRole, newApiKey } from "@evb/storage";

/** A new API key stored as `npm run keys -- create` stores it: its id and the key a caller sends. */
export async function createKey(
  store: ApiKeyStore,
  o: { name: string; roles: ApiRole[]; groups?: string[]; publishRate?: number | null; publishBurst?: number | null },
): Promise<{ id: string; key: string }> {
  const k = newApiKey();
  await store.create({
    id: k.id,
    name: o.name,
    secretSha256: k.secretSha256,
    roles: o.roles,
    groups: o.groups ?? ["1"],
    publishRate: o.publishRate ?? null,
    publishBurst: o.publishBurst ?? null,
    now: Date.now(),
  });
  return { id: k.id, key: k.key };
}
