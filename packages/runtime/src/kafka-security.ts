import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import { ConfigError, type KafkaSecurityConfig, kafkaSecurityProblems, kafkaTlsOn } from "@evb/config";
import type { KafkaSecurity } from "@evb/eventlog";
import { PemFileError, readPemFile } from "./pem-file.ts";

function certificate(setting: string, path: string): Buffer {
  const pem = readPemFile(setting, path, "a PEM certificate");
  try {
    new X509Certificate(pem);
  } catch {
    throw new PemFileError(`${setting} (${path}) is not a PEM certificate; point it at one`);
  }
  return pem;
}

/**
 * The TLS and SASL options of every Kafka connection, from the settings (docs/configuration.md,
 * "Kafka security"). Files are read and checked here, at start: a missing or unreadable one, or
 * settings that do not go together, throw one ConfigError line each. The server name is sent
 * (SNI, which managed Kafkas route by) unless every broker is given by IP address, where Node
 * forbids it; the certificate is checked against the broker's host either way unless
 * KAFKA_SSL_SERVERNAME_CHECK=false. The OAUTHBEARER token file is read at every authentication.
 */
export function kafkaSecurity(config: KafkaSecurityConfig & { KAFKA_BROKERS: string[] }): KafkaSecurity {
  const problems = kafkaSecurityProblems(config);
  if (problems.length > 0) throw new ConfigError("Kafka security", problems);
  const out: KafkaSecurity = {};
  try {
    if (kafkaTlsOn(config)) {
      out.tls = {
        ...(config.KAFKA_SSL_CA_FILE === undefined ? {} : { ca: certificate("KAFKA_SSL_CA_FILE", config.KAFKA_SSL_CA_FILE) }),
        ...(config.KAFKA_SSL_CERT_FILE === undefined
          ? {}
          : {
              cert: certificate("KAFKA_SSL_CERT_FILE", config.KAFKA_SSL_CERT_FILE),
              key: readPemFile("KAFKA_SSL_KEY_FILE", config.KAFKA_SSL_KEY_FILE as string, "the client certificate's PEM private key"),
            }),
        ...(config.KAFKA_SSL_SERVERNAME_CHECK ? {} : { checkServerIdentity: () => undefined }),
      };
      out.tlsServerName = !config.KAFKA_BROKERS.every((b) => isIP(b.replace(/:\d+$/, "").replace(/^\[|\]$/g, "")) !== 0);
    }
  } catch (err) {
    if (err instanceof PemFileError) throw new ConfigError("Kafka security", [err.message]);
    throw err;
  }
  const m = config.KAFKA_SASL_MECHANISM;
  if (m === "OAUTHBEARER") {
    const file = config.KAFKA_SASL_OAUTHBEARER_TOKEN_FILE as string;
    readPemFile("KAFKA_SASL_OAUTHBEARER_TOKEN_FILE", file, "a file holding the token");
    out.sasl = { mechanism: m, token: () => readFileSync(file, "utf8").trim() };
  } else if (m !== undefined) {
    out.sasl = { mechanism: m, username: config.KAFKA_SASL_USERNAME as string, password: config.KAFKA_SASL_PASSWORD as string };
  }
  return out;
}
