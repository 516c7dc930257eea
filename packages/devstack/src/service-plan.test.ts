import { describe, expect, it } from "vitest";
import { BrokerStack, readyMessage, StackStopping } from "./broker-stack.ts";
import { planServices, serviceOrigin, wantedPorts } from "./service-plan.ts";

const PORTS = { host: "127.0.0.1", base: 8080, mqtt: 1884, kafka: 9092 };

describe("the npm start plan", () => {
  const plan = planServices({ gateways: 2, indexers: 2, notifiers: 1 }, PORTS);

  it("starts indexers, notifiers, then gateways, each on its port, indexers with their sealer index", () => {
    expect(plan.map((p) => [p.name, p.port])).toEqual([
      ["indexer-1", 8180],
      ["indexer-2", 8181],
      ["notifier-1", 8280],
      ["gateway-1", 8080],
      ["gateway-2", 8081],
    ]);
    expect(plan[1]?.env).toEqual({ HOST: "127.0.0.1", HEALTH_PORT: "8181", SEALER_INDEX: "1" });
    expect(plan[2]?.env).toEqual({ HOST: "127.0.0.1", HEALTH_PORT: "8280" });
    expect(plan[4]?.env).toEqual({ HOST: "127.0.0.1", PORT: "8081", MQTT_PORT: "1885" });
  });

  it("wants every service port, the gateways' MQTT ports and, for its own Kafka, brokers and controllers", () => {
    const own = wantedPorts(plan, PORTS, 3);
    expect(own).toContainEqual({ port: 1885, purpose: "gateway-2 MQTT" });
    expect(own).toContainEqual({ port: 9094, purpose: "Kafka broker 3" });
    expect(own).toContainEqual({ port: 9194, purpose: "Kafka controller 3" });
    expect(own).toHaveLength(5 + 2 + 6);
    expect(wantedPorts(plan, PORTS, 0)).toHaveLength(5 + 2);
  });

  it("brackets an IPv6 host", () => {
    expect(serviceOrigin("::1", 8080)).toBe("http://[::1]:8080");
    expect(serviceOrigin("127.0.0.1", 8080)).toBe("http://127.0.0.1:8080");
  });

  it("prints where everything answers once ready, passwords hidden", () => {
    const text = readyMessage(
      {
        infra: {
          kafkaBrokers: "127.0.0.1:9092",
          databaseUrl: "postgres://evb:s3cret@127.0.0.1:5432/evb",
          redisUrl: "redis://127.0.0.1:6379",
        },
        plan,
        ports: PORTS,
      },
      "L:/event-broker",
    );
    expect(text).toMatch(
      /^ready: gateway http:\/\/127\.0\.0\.1:8080, http:\/\/127\.0\.0\.1:8081 \(mounts L:\/event-broker\); Kafka 127\.0\.0\.1:9092; /,
    );
    expect(text).toContain("Postgres postgres://evb:***@127.0.0.1:5432/evb;");
    expect(text).not.toContain("s3cret");
    expect(text).toContain("MQTT: mqtt://127.0.0.1:1884. Console: http://127.0.0.1:8080/console/.");
    expect(text).toContain("  notifier-1  http://127.0.0.1:8280/livez  http://127.0.0.1:8280/readyz  http://127.0.0.1:8280/metrics");
    expect(text).not.toContain("development secret");
  });

  it("names the development signing secret, and the evb listen line that verifies with it", () => {
    const infra = { kafkaBrokers: "k:1", databaseUrl: "postgres://h/db", redisUrl: "redis://h" };
    const secret = "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    const text = readyMessage({ infra, plan, ports: PORTS, devWebhookSecret: secret }, "L:/event-broker");
    expect(text.split("\n").at(-1)).toBe(
      `callbacks are signed with the development secret ${secret} (set WEBHOOK_SECRETS to use your own): evb listen --secret ${secret}`,
    );
  });

  it("a stack stopped before it starts starts nothing", async () => {
    const progress: string[] = [];
    const stack = new BrokerStack({
      dir: "/nonexistent",
      counts: { gateways: 1, indexers: 1, notifiers: 1, kafkaBrokers: 1 },
      ports: PORTS,
      databaseUrl: "postgres://127.0.0.1:1/x",
      redisUrl: "redis://127.0.0.1:1",
      databaseSchema: "public",
      topicPrefix: "evb.",
      groups: ["1"],
      partitions: 3,
      callbackAllowedCidrs: "127.0.0.0/8",
      progress: (m) => progress.push(m),
    });
    await stack.stop();
    await expect(stack.start()).rejects.toBeInstanceOf(StackStopping);
    expect(progress).toEqual([]);
  });
});
