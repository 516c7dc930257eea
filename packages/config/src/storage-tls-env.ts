import { z } from "zod";
import { boolVar } from "./env.ts";

function optionalVar(fix: string) {
  return z.preprocess((v) => (v === "" ? undefined : v), z.string().optional()).describe(fix);
}

/**
 * TLS towards Postgres and Redis (docs/security.md, "Postgres and Redis"). Postgres over TLS is
 * always verify-full here: the chain against DATABASE_SSL_CA_FILE (or the system's CAs) and the
 * host name of DATABASE_URL. Redis speaks TLS for a `rediss://` REDIS_URL.
 */
export const storageTlsEnv = {
  DATABASE_SSL: boolVar(
    false,
    "true to connect to Postgres over TLS, verified against DATABASE_SSL_CA_FILE or else the system's CAs, host name checked (verify-full); on by itself with DATABASE_SSL_CA_FILE",
  ),
  DATABASE_SSL_CA_FILE: optionalVar("a PEM file of the CA(s) that signed the Postgres server's certificate"),
  REDIS_TLS_CA_FILE: optionalVar("a PEM file of the CA(s) that signed the Redis server's certificate; needs a rediss:// REDIS_URL"),
};

export type StorageTlsConfig = z.infer<z.ZodObject<typeof storageTlsEnv>> & { REDIS_URL: string };

/** Settings that cannot work together, each as a fix-it line (empty: none). */
export function storageTlsProblems(c: StorageTlsConfig): string[] {
  if (c.REDIS_TLS_CA_FILE !== undefined && !c.REDIS_URL.startsWith("rediss:")) {
    return ["REDIS_TLS_CA_FILE needs a rediss:// REDIS_URL (TLS); change the URL's scheme or unset REDIS_TLS_CA_FILE"];
  }
  return [];
}
