import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { consoleProgress, KafkaCluster } from "@evb/devstack";
import { TestCa } from "../support/test-certs.ts";

/** The SCRAM and PLAIN users the broker knows, and their passwords. */
export const KAFKA_USERS = {
  scram: { name: "evb-scram", password: "scram-pass-1" },
  plain: { name: "evb-plain", password: "plain-pass-1" },
};

/**
 * A one-broker Kafka of the test's own (the shared one stays plain text), on ports of its own
 * (19400–19800, clear of the shared 9092/9192 and of the other tests' ranges): PLAINTEXT among
 * itself, SASL_SSL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER with unsigned tokens) on `saslSsl`, and SSL requiring a client
 * certificate on `mtls`, with certificates from `ca`. SCRAM users are made at format time.
 */
export class SecureKafka {
  readonly ca = new TestCa("evb-kafka-ca");
  readonly dir = mkdtempSync(join(tmpdir(), "evb-kafka-tls-"));
  readonly plaintext: string;
  readonly saslSsl: string;
  readonly mtls: string;
  private readonly cluster: KafkaCluster;

  constructor() {
    const base = 19400 + 4 * Math.floor(Math.random() * 75);
    this.plaintext = `127.0.0.1:${base}`;
    this.saslSsl = `127.0.0.1:${base + 1}`;
    this.mtls = `127.0.0.1:${base + 2}`;
    const broker = this.ca.leaf("kafka-broker");
    // Kafka's PEM key store: the private key (PKCS#8, unencrypted) then the certificate.
    const keystore = join(this.ca.dir, "broker-keystore.pem");
    writeFileSync(keystore, `${readFileSync(broker.key, "utf8")}${broker.pem}`);
    const { scram, plain } = KAFKA_USERS;
    const perListener = (l: string) => [
      `listener.name.${l}.ssl.keystore.type=PEM`,
      `listener.name.${l}.ssl.keystore.location=${keystore}`,
      `listener.name.${l}.ssl.truststore.type=PEM`,
      `listener.name.${l}.ssl.truststore.location=${this.ca.ca.cert}`,
    ];
    this.cluster = new KafkaCluster({
      dir: this.dir,
      brokers: 1,
      basePort: base,
      fresh: true,
      heap: "384m",
      progress: consoleProgress,
      extra: {
        listeners: [
          { name: "SASL_SSL", protocol: "SASL_SSL", port: base + 1 },
          { name: "SSL", protocol: "SSL", port: base + 2 },
        ],
        properties: [
          ...perListener("sasl_ssl"),
          ...perListener("ssl"),
          "listener.name.ssl.ssl.client.auth=required",
          "listener.name.sasl_ssl.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER",
          // Kafka's unsecured OAUTHBEARER validator (its default for the mechanism): accepts an unsigned JWT with sub, iat and exp.
          "listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
          `listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_${plain.name}="${plain.password}";`,
          "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;",
          "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;",
        ],
        formatArgs: [
          "--add-scram",
          `SCRAM-SHA-256=[name=${scram.name},password=${scram.password}]`,
          "--add-scram",
          `SCRAM-SHA-512=[name=${scram.name},password=${scram.password}]`,
        ],
      },
    });
  }

  async start(): Promise<void> {
    await this.cluster.start();
  }

  async stop(): Promise<void> {
    await this.cluster.stop();
    rmSync(this.dir, { recursive: true, force: true });
    this.ca.remove();
  }
}

/** An unsigned JWT (`alg: none`) for `sub`, valid for an hour: what Kafka's unsecured OAUTHBEARER validator accepts. */
export function unsecuredToken(sub: string): string {
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const now = Math.floor(Date.now() / 1000);
  return `${b64({ alg: "none" })}.${b64({ sub, iat: now, exp: now + 3600 })}.`;
}
