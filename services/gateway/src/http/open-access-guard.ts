import { isIP } from "node:net";

interface AccessSettings {
  HOST: string;
  API_KEYS: boolean;
  API_BASIC_AUTH: ReadonlyMap<string, string>;
  API_ALLOWED_CIDRS: readonly unknown[];
  ALLOW_OPEN_ACCESS: boolean;
}

/** Whether HOST only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost") return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  return h === "::1" || h === "0:0:0:0:0:0:0:1";
}

/**
 * A gateway that anyone on the network can reach and that checks nobody is almost always a
 * mistake (a container started with HOST=0.0.0.0 and nothing else). Returns why such a
 * configuration is refused, or null. ALLOW_OPEN_ACCESS=true says it is meant.
 */
export function openAccessProblem(c: AccessSettings): string | null {
  if (isLoopbackHost(c.HOST) || c.ALLOW_OPEN_ACCESS) return null;
  if (c.API_KEYS || c.API_BASIC_AUTH.size > 0 || c.API_ALLOWED_CIDRS.length > 0) return null;
  return (
    `HOST=${c.HOST} is not loopback and no access control is configured, so anyone who reaches it may publish, subscribe and administer. ` +
    "Fix: set API_KEYS=true (keys from npm run keys), API_BASIC_AUTH or API_ALLOWED_CIDRS; or ALLOW_OPEN_ACCESS=true to serve everyone on purpose (docs/security.md)"
  );
}
