import type { ConnectionOptions } from "node:tls";
import { ConfigError, type StorageTlsConfig, storageTlsProblems } from "@evb/config";
import { PemFileError, readPemFile } from "./pem-file.ts";

function checked<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof PemFileError) throw new ConfigError("storage TLS", [err.message]);
    throw err;
  }
}

/**
 * The `ssl` option of every Postgres pool, or undefined for plain text (docs/security.md,
 * "Postgres and Redis"). Always verify-full: Node checks the chain and the host name of
 * DATABASE_URL. A `sslmode`/`sslrootcert` in DATABASE_URL still applies as pg reads it, over this.
 */
export function postgresSsl(config: StorageTlsConfig): ConnectionOptions | undefined {
  if (!config.DATABASE_SSL && config.DATABASE_SSL_CA_FILE === undefined) return undefined;
  const file = config.DATABASE_SSL_CA_FILE;
  return checked(() => ({
    rejectUnauthorized: true,
    ...(file === undefined ? {} : { ca: readPemFile("DATABASE_SSL_CA_FILE", file, "a PEM file of CA certificates") }),
  }));
}

/**
 * The `tls` option of every Redis connection: set for a `rediss://` REDIS_URL (ioredis itself does
 * not turn TLS on for that scheme: without this a rediss:// URL was spoken to in plain text),
 * verified against REDIS_TLS_CA_FILE or the system's CAs; undefined for `redis://`.
 */
export function redisTls(config: StorageTlsConfig): ConnectionOptions | undefined {
  const problems = storageTlsProblems(config);
  if (problems.length > 0) throw new ConfigError("storage TLS", problems);
  if (!config.REDIS_URL.startsWith("rediss:")) return undefined;
  const file = config.REDIS_TLS_CA_FILE;
  return checked(() => (file === undefined ? {} : { ca: readPemFile("REDIS_TLS_CA_FILE", file, "a PEM file of CA certificates") }));
}
