import { z } from "zod";
import { boolVar } from "./env.ts";

/** An optional string: empty or unset means none. */
function optionalVar(fix: string) {
  return z.preprocess((v) => (v === "" ? undefined : v), z.string().optional()).describe(fix);
}

/** The SASL mechanisms the Kafka client (@platformatic/kafka) speaks, GSSAPI (Kerberos) left out. */
export const KAFKA_SASL_MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"] as const;

/**
 * How every Kafka connection of every service is secured (docs/security.md, "Kafka"): TLS with a
 * CA, an optional client certificate and the server name check, and SASL. All off by default
 * (the single-machine `npm start` speaks plain text on loopback).
 */
export const kafkaSecurityEnv = {
  KAFKA_SSL: boolVar(
    false,
    "true to speak TLS to the brokers, verified against KAFKA_SSL_CA_FILE or else the system's CAs (a managed Kafka); on by itself when any KAFKA_SSL_*_FILE is set",
  ),
  KAFKA_SSL_CA_FILE: optionalVar("a PEM file of the CA(s) that signed the brokers' certificates; unset: the system's CAs"),
  KAFKA_SSL_CERT_FILE: optionalVar("a PEM client certificate for brokers that ask for one (ssl.client.auth); set with KAFKA_SSL_KEY_FILE"),
  KAFKA_SSL_KEY_FILE: optionalVar("the PEM private key of KAFKA_SSL_CERT_FILE, unencrypted; set with KAFKA_SSL_CERT_FILE"),
  KAFKA_SSL_SERVERNAME_CHECK: boolVar(
    true,
    "false to accept a broker certificate that does not name the host in KAFKA_BROKERS (the chain is still verified); true checks it",
  ),
  KAFKA_SASL_MECHANISM: z
    .preprocess((v) => (v === "" ? undefined : v), z.enum(KAFKA_SASL_MECHANISMS).optional())
    .describe("one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER; unset: no SASL"),
  KAFKA_SASL_USERNAME: optionalVar("the SASL user name (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)"),
  KAFKA_SASL_PASSWORD: optionalVar("the SASL password of KAFKA_SASL_USERNAME"),
  KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: optionalVar(
    "a file holding the OAUTHBEARER token (a JWT), read again at every authentication so that a sidecar can renew it",
  ),
};

export type KafkaSecurityConfig = z.infer<z.ZodObject<typeof kafkaSecurityEnv>>;

/** Settings that cannot work together, each as a fix-it line (empty: none). */
export function kafkaSecurityProblems(c: KafkaSecurityConfig): string[] {
  const problems: string[] = [];
  if ((c.KAFKA_SSL_CERT_FILE === undefined) !== (c.KAFKA_SSL_KEY_FILE === undefined)) {
    problems.push("KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE: set both (the client certificate and its key) or neither");
  }
  const m = c.KAFKA_SASL_MECHANISM;
  const userPass = c.KAFKA_SASL_USERNAME !== undefined && c.KAFKA_SASL_PASSWORD !== undefined;
  if (m !== undefined && m !== "OAUTHBEARER" && !userPass) {
    problems.push(`KAFKA_SASL_MECHANISM=${m} needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD; set both`);
  }
  if (m === "OAUTHBEARER" && c.KAFKA_SASL_OAUTHBEARER_TOKEN_FILE === undefined) {
    problems.push("KAFKA_SASL_MECHANISM=OAUTHBEARER needs KAFKA_SASL_OAUTHBEARER_TOKEN_FILE; set it");
  }
  if (m === undefined && (c.KAFKA_SASL_USERNAME !== undefined || c.KAFKA_SASL_PASSWORD !== undefined)) {
    problems.push("KAFKA_SASL_USERNAME/KAFKA_SASL_PASSWORD are set but KAFKA_SASL_MECHANISM is not; set it (e.g. SCRAM-SHA-512)");
  }
  return problems;
}

/** Whether the brokers are spoken to over TLS. */
export function kafkaTlsOn(c: KafkaSecurityConfig): boolean {
  return c.KAFKA_SSL || c.KAFKA_SSL_CA_FILE !== undefined || c.KAFKA_SSL_CERT_FILE !== undefined;
}
