import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, parseEnv } from "./env.ts";
import { kafkaSecurityEnv, kafkaSecurityProblems, kafkaTlsOn } from "./kafka-security-env.ts";

const schema = z.object(kafkaSecurityEnv);
const parse = (env: Record<string, string>) => parseEnv("test", schema, env);

describe("the Kafka security settings", () => {
  it("are all off by default, the server name check on", () => {
    const c = parse({});
    expect(c).toMatchObject({ KAFKA_SSL: false, KAFKA_SSL_SERVERNAME_CHECK: true, KAFKA_SASL_MECHANISM: undefined });
    expect(kafkaTlsOn(c)).toBe(false);
    expect(kafkaSecurityProblems(c)).toEqual([]);
  });
  it("turn TLS on with KAFKA_SSL or any file", () => {
    expect(kafkaTlsOn(parse({ KAFKA_SSL: "true" }))).toBe(true);
    expect(kafkaTlsOn(parse({ KAFKA_SSL_CA_FILE: "/ca.pem" }))).toBe(true);
  });
  it("refuse a mechanism the client does not speak, hiding the password of a bad value", () => {
    expect(() => parse({ KAFKA_SASL_MECHANISM: "GSSAPI" })).toThrow(ConfigError);
    expect(() => parse({ KAFKA_SASL_MECHANISM: "GSSAPI" })).toThrow(/KAFKA_SASL_MECHANISM \("GSSAPI"\).*Fix: one of PLAIN/);
  });
  it("name each combination that cannot work", () => {
    expect(kafkaSecurityProblems(parse({ KAFKA_SASL_MECHANISM: "SCRAM-SHA-512", KAFKA_SASL_USERNAME: "u" }))).toEqual([
      "KAFKA_SASL_MECHANISM=SCRAM-SHA-512 needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD; set both",
    ]);
    expect(kafkaSecurityProblems(parse({ KAFKA_SASL_MECHANISM: "OAUTHBEARER" }))).toEqual([
      expect.stringMatching(/needs KAFKA_SASL_OAUTHBEARER_TOKEN_FILE/),
    ]);
    expect(kafkaSecurityProblems(parse({ KAFKA_SASL_PASSWORD: "p" }))).toEqual([expect.stringMatching(/KAFKA_SASL_MECHANISM is not/)]);
    expect(kafkaSecurityProblems(parse({ KAFKA_SSL_CERT_FILE: "/c.pem" }))).toEqual([expect.stringMatching(/set both/)]);
  });
});
