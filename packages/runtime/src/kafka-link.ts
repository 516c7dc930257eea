import { kafkaTlsOn, type SharedConfig } from "@evb/config";
import { kafkaLinkProblem } from "@evb/domain";
import type { KafkaClient } from "@evb/eventlog";

/**
 * One metadata request, not retried, before a service starts on Kafka: a failure no retry mends (a
 * wrong password, a CA that does not match, TLS on one side only) stops the start with one line
 * saying which setting to fix (kafkaLinkProblem), instead of a minute of retries that end in
 * "metadata failed 13 times". Anything else (nothing listening yet, a timeout) is left to the
 * retries of what follows, as before.
 */
export async function checkKafkaLink(kafka: KafkaClient, config: SharedConfig): Promise<void> {
  const admin = kafka.admin("link-check");
  try {
    await admin.metadata({ topics: [], forceUpdate: true, retries: 0 });
  } catch (err) {
    const problem = kafkaLinkProblem(err, {
      brokers: config.KAFKA_BROKERS,
      tls: kafkaTlsOn(config),
      clientCertificate: config.KAFKA_SSL_CERT_FILE !== undefined,
      sasl:
        config.KAFKA_SASL_MECHANISM === undefined
          ? undefined
          : { mechanism: config.KAFKA_SASL_MECHANISM, username: config.KAFKA_SASL_USERNAME },
    });
    if (problem !== null) throw new Error(problem, { cause: err });
  } finally {
    await admin.close().catch(() => {});
  }
}
