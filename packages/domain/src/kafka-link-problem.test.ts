import { describe, expect, it } from "vitest";
import { type KafkaLinkSettings, kafkaLinkProblem } from "./kafka-link-problem.ts";

/** An error as @platformatic/kafka nests a failed connection: attempts in `errors`, the reason in `cause`. */
function clientError(leaf: { code?: string; message: string }): Error {
  const inner = Object.assign(new Error(leaf.message), leaf.code ? { code: leaf.code } : {});
  const network = Object.assign(new Error("Connection to k:9093 failed."), { code: "PLT_KFK_NETWORK", cause: inner });
  return Object.assign(new Error("Cannot connect to any broker."), { code: "PLT_KFK_MULTIPLE", errors: [network] });
}

const tlsSasl: KafkaLinkSettings = {
  brokers: ["k:9093"],
  tls: true,
  clientCertificate: false,
  sasl: { mechanism: "SCRAM-SHA-512", username: "evb" },
};
const plain: KafkaLinkSettings = { brokers: ["k:9092"], tls: false, clientCertificate: false, sasl: undefined };

describe("kafkaLinkProblem: a first connection that no retry mends, named by the setting to fix", () => {
  it("a refused SASL login names the user and mechanism, never the password", () => {
    const err = clientError({ code: "PLT_KFK_AUTHENTICATION", message: "SASL authentication failed." });
    expect(kafkaLinkProblem(err, tlsSasl)).toBe(
      "Kafka at k:9093 refused the SASL login (KAFKA_SASL_USERNAME=evb with KAFKA_SASL_MECHANISM=SCRAM-SHA-512): check KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD, and that the broker's listener enables this mechanism",
    );
  });
  it("an untrusted certificate points at KAFKA_SSL_CA_FILE", () => {
    const err = clientError({
      code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      message: "unable to verify the first certificate; if the root CA is installed locally, try…",
    });
    expect(kafkaLinkProblem(err, tlsSasl)).toMatch(
      /does not trust \(UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate\): set KAFKA_SSL_CA_FILE/,
    );
  });
  it("a certificate for another host points at KAFKA_BROKERS or the server name check", () => {
    const err = clientError({ code: "ERR_TLS_CERT_ALTNAME_INVALID", message: "Hostname/IP does not match certificate's altnames" });
    expect(kafkaLinkProblem(err, tlsSasl)).toMatch(/KAFKA_SSL_SERVERNAME_CHECK=false$/);
  });
  it("plain text to a TLS listener, and TLS to a plain one", () => {
    expect(kafkaLinkProblem(Object.assign(new Error("Broker requires TLS."), { code: "PLT_KFK_USER" }), plain)).toMatch(
      /set KAFKA_SSL=true/,
    );
    const tlsToPlain = clientError({ code: "PLT_KFK_USER", message: "TLS handshake failed. Please verify the broker supports TLS." });
    expect(kafkaLinkProblem(tlsToPlain, tlsSasl)).toMatch(/does not speak TLS on that port/);
  });
  it("a connection closed before any answer lists what the client does not use", () => {
    const closed = clientError({ code: "PLT_KFK_NETWORK", message: "Connection closed" });
    expect(kafkaLinkProblem(closed, { ...tlsSasl, sasl: undefined })).toMatch(
      /may require a client certificate \(KAFKA_SSL_CERT_FILE, KAFKA_SSL_KEY_FILE\) or SASL \(KAFKA_SASL_MECHANISM and its credentials\)/,
    );
    expect(kafkaLinkProblem(closed, plain)).toMatch(/may require TLS \(KAFKA_SSL\) or SASL/);
  });
  it("what may mend (nothing listening yet, a timeout) is left to the retries", () => {
    expect(kafkaLinkProblem(clientError({ code: "ECONNREFUSED", message: "connect ECONNREFUSED 127.0.0.1:9092" }), plain)).toBeNull();
    expect(kafkaLinkProblem(clientError({ code: "PLT_KFK_TIMEOUT", message: "Connection to k:9092 timed out." }), tlsSasl)).toBeNull();
    expect(kafkaLinkProblem("not an error", plain)).toBeNull();
  });
});
