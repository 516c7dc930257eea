import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectSuccess, rest, uniqueTopic } from "../support/broker-expect.ts";
import { Receiver } from "../support/receiver.ts";
import { QUICK_CALLBACKS_ENV, TestSystem } from "../support/system.ts";
import { subscribe } from "../subscriptions/helpers.ts";
import { KAFKA_USERS, SecureKafka, unsecuredToken } from "./secure-kafka.ts";

// Crash survived: none. Every service on a Kafka of its own with a SASL_SSL listener (certificates
// made with openssl, SCRAM users made at format time) and an SSL listener that requires a client
// certificate: publishes and callbacks work with SCRAM-SHA-512, SCRAM-SHA-256, PLAIN and mutual
// TLS; a wrong password, a wrong CA and a plain-text client each stop the start with one line.
describe("Kafka over TLS with SASL", () => {
  const kafka = new SecureKafka();
  let sys: TestSystem;
  let rx: Receiver;
  const T = uniqueTopic("kafka-tls");
  const scram = (mechanism: string) => ({
    KAFKA_BROKERS: kafka.saslSsl,
    KAFKA_SSL_CA_FILE: kafka.ca.ca.cert,
    KAFKA_SASL_MECHANISM: mechanism,
    KAFKA_SASL_USERNAME: KAFKA_USERS.scram.name,
    KAFKA_SASL_PASSWORD: KAFKA_USERS.scram.password,
  });
  // TLS and SCRAM's rounds are part of the connect: more than the 1 s default on a busy 2-core machine.
  const slowConnect = { KAFKA_CONNECT_TIMEOUT_MS: "5000" };

  beforeAll(async () => {
    await kafka.start();
    rx = await Receiver.start();
    sys = await TestSystem.start({ notifiers: 1, env: { ...QUICK_CALLBACKS_ENV, ...slowConnect, ...scram("SCRAM-SHA-512") } });
    expectSuccess(await rest(sys.gatewayUrl, "L", "open", { topic: T }), "L");
  });
  afterAll(async () => {
    await rx?.close();
    await sys?.stop();
    await kafka.stop();
  });

  const publishVia = async (base: string, content: string) => {
    const r = await rest(base, "L", "publish", { topic: T, content });
    expect(r.json, r.text).toMatchObject({ status: "SUCCESS" });
    return (r.json as { eventId: string }).eventId;
  };

  it("SCRAM-SHA-512 over TLS: publish, getEvent and a callback, every service on it", async () => {
    const id = await subscribe(sys.gatewayUrl, { topic: T, url: rx.url() });
    const eventId = await publishVia(sys.gatewayUrl, "scram-512");
    expect(expectSuccess(await rest(sys.gatewayUrl, "L", "getEvent", { eventId }), "L")).toMatchObject({ eventId, topic: T });
    await rx.until(() => rx.deliveredIds(id).includes(eventId), "the callback");
  });

  it("SCRAM-SHA-256, PLAIN, OAUTHBEARER and a client certificate on the SSL listener each carry a gateway's publishes", async () => {
    const client = kafka.ca.leaf("evb-service", { server: false });
    const tokenFile = join(kafka.ca.dir, "oauth.token");
    writeFileSync(tokenFile, `${unsecuredToken("evb-oauth")}\n`);
    const variants: Record<string, Record<string, string>> = {
      "gateway-scram256": scram("SCRAM-SHA-256"),
      "gateway-plain": {
        ...scram("PLAIN"),
        KAFKA_SASL_USERNAME: KAFKA_USERS.plain.name,
        KAFKA_SASL_PASSWORD: KAFKA_USERS.plain.password,
      },
      "gateway-oauth": {
        ...scram("OAUTHBEARER"),
        KAFKA_SASL_USERNAME: "",
        KAFKA_SASL_PASSWORD: "",
        KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: tokenFile,
      },
      "gateway-mtls": {
        KAFKA_BROKERS: kafka.mtls,
        KAFKA_SSL_CA_FILE: kafka.ca.ca.cert,
        KAFKA_SSL_CERT_FILE: client.cert,
        KAFKA_SSL_KEY_FILE: client.key,
        KAFKA_SASL_MECHANISM: "",
        KAFKA_SASL_USERNAME: "",
        KAFKA_SASL_PASSWORD: "",
      },
    };
    for (const [name, env] of Object.entries(variants)) {
      const base = await sys.addGateway(name, { ...slowConnect, ...env });
      await publishVia(base, name);
    }
  });

  it("a wrong password, a wrong CA, a plain-text client, TLS to a plain port and a missing client certificate each stop the start with one line", async () => {
    const cases: Array<[string, "gateway" | "notifier", Record<string, string>, RegExp]> = [
      [
        "bad-password",
        "gateway",
        { KAFKA_SASL_PASSWORD: "wrong" },
        /refused the SASL login \(KAFKA_SASL_USERNAME=evb-scram with KAFKA_SASL_MECHANISM=SCRAM-SHA-512\)/,
      ],
      ["bad-password-n", "notifier", { KAFKA_SASL_PASSWORD: "wrong" }, /refused the SASL login/],
      [
        "bad-ca",
        "gateway",
        { KAFKA_SSL_CA_FILE: "", KAFKA_SSL: "true" },
        /sent a certificate this client does not trust \(UNABLE_TO_VERIFY_LEAF_SIGNATURE.*set KAFKA_SSL_CA_FILE/,
      ],
      [
        "plain-client",
        "gateway",
        { KAFKA_SSL_CA_FILE: "", KAFKA_SASL_MECHANISM: "", KAFKA_SASL_USERNAME: "", KAFKA_SASL_PASSWORD: "" },
        /speaks TLS and this client does not: set KAFKA_SSL=true/,
      ],
      [
        "tls-to-plain",
        "gateway",
        { KAFKA_BROKERS: kafka.plaintext, KAFKA_SASL_MECHANISM: "", KAFKA_SASL_USERNAME: "", KAFKA_SASL_PASSWORD: "" },
        /does not speak TLS on that port/,
      ],
      [
        "no-client-cert",
        "gateway",
        { KAFKA_BROKERS: kafka.mtls, KAFKA_SASL_MECHANISM: "", KAFKA_SASL_USERNAME: "", KAFKA_SASL_PASSWORD: "" },
        /closed the connection before it answered: its listener may require a client certificate/,
      ],
    ];
    for (const [name, service, env, message] of cases) {
      const start =
        service === "gateway" ? sys.addGateway(name, { ...slowConnect, ...env }) : sys.addNotifier(name, { ...slowConnect, ...env });
      const err = await start.then(
        () => new Error(`${name} started`),
        (e: Error) => e,
      );
      expect(err.message, name).toMatch(message);
      // One line, not a stack or a retry log: the failure is the last thing the service printed.
      expect(err.message.match(/failed to start: .*$/m)?.[0], name).toMatch(message);
    }
    // A file that cannot be read is a configuration error, named like every other one.
    const missing = await sys.addGateway("missing-ca", { KAFKA_SSL_CA_FILE: "/nope/ca.pem" }).then(
      () => new Error("started"),
      (e: Error) => e,
    );
    expect(missing.message).toMatch(
      /failed to start: Kafka security: invalid configuration\n\s+- KAFKA_SSL_CA_FILE \(\/nope\/ca\.pem\): no such file; point it at a PEM certificate/,
    );
  });

  it("the SASL password is in no service's log", () => {
    for (const name of ["indexer-1", "notifier-1", "gateway-1", "gateway-plain", "bad-password"]) {
      const log = readFileSync(sys.logFileOf(name), "utf8");
      expect(log.length, name).toBeGreaterThan(0);
      for (const secret of [KAFKA_USERS.scram.password, KAFKA_USERS.plain.password, "wrong"]) expect(log, name).not.toContain(secret);
    }
  });
});
