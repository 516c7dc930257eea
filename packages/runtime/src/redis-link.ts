import { Redis } from "ioredis";
import { redactUrl, type SharedConfig } from "@evb/config";
import { redisTls } from "./storage-tls.ts";

/** Node's codes for a certificate the client did not accept. */
const UNTRUSTED =
  /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|CERT_UNTRUSTED|ERR_TLS_CERT_ALTNAME_INVALID)$/;

/**
 * Why a first Redis connection failed in a way no retry mends, as one line naming what to fix, or
 * null when it may mend (nothing listening yet, a timeout), which the services' reconnects wait out
 * as before. Pure: read from the error ioredis gave, the URL's scheme and whether the TCP
 * connection was made (ioredis says "Connection is closed." for a refused connection too).
 */
export function redisLinkProblem(err: unknown, url: string, connected: boolean): string | null {
  const e = (err ?? {}) as { code?: unknown; message?: unknown };
  const code = String(e.code ?? "");
  const message = String(e.message ?? "");
  const at = `Redis at ${redactUrl(url)}`;
  const tls = url.startsWith("rediss:");
  if (UNTRUSTED.test(code)) {
    return `${at} sent a certificate this client does not accept (${code}: ${message.split(";")[0]}): set REDIS_TLS_CA_FILE to the CA that signed it, and use a host name the certificate names`;
  }
  if (/WRONGPASS|NOAUTH|invalid password|invalid username-password/i.test(message)) {
    return `${at} refused the credentials: check the user and password in REDIS_URL (redis://user:password@host:port)`;
  }
  if (tls && /before secure TLS connection|wrong version number|EPROTO/i.test(`${code} ${message}`)) {
    return `${at} does not speak TLS on that port: use redis:// for a plain port, or the port of its tls-port`;
  }
  if (!tls && connected && /Connection is closed|ECONNRESET|socket hang up/i.test(`${code} ${message}`)) {
    return `${at} closed the connection before it answered: if that port serves TLS (tls-port), use rediss:// with REDIS_TLS_CA_FILE`;
  }
  return null;
}

/**
 * One connection and a PING before a service starts on Redis, at most 2 s, never retried: a
 * failure no retry mends (a CA that does not match, TLS on one side only, a refused password)
 * stops the start with one line instead of a reconnect loop that never ends (a rediss:// URL
 * on a plain port hung the start until its deadline). A Redis not up yet is left to the
 * services' reconnects.
 */
export async function checkRedisLink(config: SharedConfig): Promise<void> {
  const tls = redisTls(config);
  const redis = new Redis(config.REDIS_URL, {
    ...(tls === undefined ? {} : { tls }),
    lazyConnect: true,
    connectTimeout: 2_000,
    commandTimeout: 2_000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  let first: unknown;
  let connected = false;
  redis.on("error", (err) => {
    first ??= err;
  });
  redis.on("connect", () => {
    connected = true;
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    const problem =
      redisLinkProblem(first ?? err, config.REDIS_URL, connected) ??
      (first === undefined ? null : redisLinkProblem(err, config.REDIS_URL, connected));
    if (problem !== null) throw new Error(problem, { cause: err });
  } finally {
    redis.disconnect();
  }
}
