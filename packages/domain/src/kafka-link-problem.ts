/** What the start-up check knows of the client's own settings, to say which one to fix. */
export interface KafkaLinkSettings {
  brokers: readonly string[];
  tls: boolean;
  clientCertificate: boolean;
  sasl: { mechanism: string; username: string | undefined } | undefined;
}

/** Node's codes for a certificate the client did not accept. */
const UNTRUSTED = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_UNTRUSTED",
  "CERT_SIGNATURE_FAILURE",
]);

interface Flat {
  code: string;
  message: string;
}

/** Every error of a failure, the attempts (`errors`) and causes (`cause`) @platformatic/kafka nests. */
function flatten(err: unknown, depth = 0): Flat[] {
  if (!err || typeof err !== "object" || depth > 8) return [];
  const e = err as { code?: unknown; message?: unknown; errors?: unknown; cause?: unknown };
  const inner = [...(Array.isArray(e.errors) ? e.errors : []), ...(e.cause === undefined ? [] : [e.cause])];
  return [{ code: String(e.code ?? ""), message: String(e.message ?? "") }, ...inner.flatMap((x) => flatten(x, depth + 1))];
}

/**
 * Why a first connection to Kafka failed in a way no retry mends, as one line that names the
 * setting to fix (docs/security.md, "Kafka"), or null when it may mend (nothing listening yet, a
 * timeout: the usual retries decide). Read from the client's errors: SASL refused, the broker's
 * certificate not trusted or not naming the host, TLS spoken to a plain port or plain text to a
 * TLS one, and a broker that closes the connection before it answers (a client certificate or
 * SASL it requires).
 */
export function kafkaLinkProblem(err: unknown, s: KafkaLinkSettings): string | null {
  const all = flatten(err);
  const at = `Kafka at ${s.brokers.join(",")}`;
  const has = (re: RegExp) => all.find((e) => re.test(e.message));
  if (all.some((e) => e.code === "PLT_KFK_AUTHENTICATION") || has(/SASL authentication failed/i)) {
    const who = s.sasl ? `KAFKA_SASL_USERNAME=${s.sasl.username ?? "(unset)"} with KAFKA_SASL_MECHANISM=${s.sasl.mechanism}` : "no SASL";
    return `${at} refused the SASL login (${who}): check KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD, and that the broker's listener enables this mechanism`;
  }
  if (has(/UNSUPPORTED_SASL_MECHANISM|unsupported sasl mechanism|does not support.*mechanism/i)) {
    return `${at} does not offer KAFKA_SASL_MECHANISM=${s.sasl?.mechanism}: set the mechanism its listener enables (sasl.enabled.mechanisms)`;
  }
  const untrusted = all.find((e) => UNTRUSTED.has(e.code));
  if (untrusted) {
    return `${at} sent a certificate this client does not trust (${untrusted.code}: ${untrusted.message.split(";")[0]}): set KAFKA_SSL_CA_FILE to the CA that signed the brokers' certificates`;
  }
  const altname = all.find((e) => e.code === "ERR_TLS_CERT_ALTNAME_INVALID");
  if (altname) {
    return `${at}: the broker's certificate does not name that host (${altname.message}): use a name it was issued for in KAFKA_BROKERS, or KAFKA_SSL_SERVERNAME_CHECK=false`;
  }
  if (has(/Broker requires TLS/i)) {
    return `${at} speaks TLS and this client does not: set KAFKA_SSL=true (with KAFKA_SSL_CA_FILE for a private CA) and, for a SASL_SSL listener, KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD`;
  }
  if (s.tls && has(/TLS handshake failed|before secure TLS connection|wrong version number|packet length too long/i) !== undefined) {
    return `${at} does not speak TLS on that port: point KAFKA_BROKERS at its SSL or SASL_SSL listener, or turn KAFKA_SSL and KAFKA_SSL_*_FILE off for a plain one`;
  }
  if (has(/^Connection closed/i)) {
    const missing = [
      ...(s.tls && !s.clientCertificate ? ["a client certificate (KAFKA_SSL_CERT_FILE, KAFKA_SSL_KEY_FILE)"] : []),
      ...(s.tls ? [] : ["TLS (KAFKA_SSL)"]),
      ...(s.sasl ? [] : ["SASL (KAFKA_SASL_MECHANISM and its credentials)"]),
    ];
    return `${at} closed the connection before it answered${missing.length > 0 ? `: its listener may require ${missing.join(" or ")}, which this client does not use` : ""}; compare the listener's security protocol with the KAFKA_SSL_* and KAFKA_SASL_* settings`;
  }
  return null;
}
