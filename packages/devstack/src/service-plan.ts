import type { ServiceName } from "./service-process.ts";

/** How many of each process a local stack runs. */
export interface StackCounts {
  gateways: number;
  indexers: number;
  notifiers: number;
  /** Kafka brokers started when no KAFKA_BROKERS is given (1 or 3). */
  kafkaBrokers: number;
}

/** Where a local stack listens: gateway i on `base`+i-1 (MQTT on `mqtt`+i-1), indexers from `base`+100, notifiers from `base`+200. */
export interface StackPorts {
  host: string;
  base: number;
  mqtt: number;
  /** Kafka broker i on `kafka`+i-1, its controller on `kafka`+100+i-1. */
  kafka: number;
}

/** One service process of the stack and the port it answers on. */
export interface PlannedService {
  name: string;
  service: ServiceName;
  port: number;
  /** The environment that places it: its ports, and an indexer's sealer index. */
  env: Record<string, string>;
}

/** Every service process in start order (indexers, notifiers, then gateways) and where it listens. */
export function planServices(counts: Omit<StackCounts, "kafkaBrokers">, ports: StackPorts): PlannedService[] {
  const many = (n: number, f: (i: number) => PlannedService) => Array.from({ length: n }, (_, i) => f(i));
  return [
    ...many(counts.indexers, (i) => ({
      name: `indexer-${i + 1}`,
      service: "indexer",
      port: ports.base + 100 + i,
      env: { HOST: ports.host, HEALTH_PORT: String(ports.base + 100 + i), SEALER_INDEX: String(i) },
    })),
    ...many(counts.notifiers, (i) => ({
      name: `notifier-${i + 1}`,
      service: "notifier",
      port: ports.base + 200 + i,
      env: { HOST: ports.host, HEALTH_PORT: String(ports.base + 200 + i) },
    })),
    ...many(counts.gateways, (i) => ({
      name: `gateway-${i + 1}`,
      service: "gateway",
      port: ports.base + i,
      env: { HOST: ports.host, PORT: String(ports.base + i), MQTT_PORT: String(ports.mqtt + i) },
    })),
  ];
}

/**
 * Every port the stack will listen on, with what for: each service's, each gateway's MQTT port
 * and, when the stack starts its own Kafka, each broker's and controller's.
 */
export function wantedPorts(
  plan: readonly PlannedService[],
  ports: StackPorts,
  ownKafkaBrokers: number,
): Array<{ port: number; purpose: string }> {
  const wanted = plan.map((p) => ({ port: p.port, purpose: p.name }));
  for (const [i, p] of plan.filter((q) => q.service === "gateway").entries())
    wanted.push({ port: ports.mqtt + i, purpose: `${p.name} MQTT` });
  for (let i = 0; i < ownKafkaBrokers; i++)
    wanted.push(
      { port: ports.kafka + i, purpose: `Kafka broker ${i + 1}` },
      { port: ports.kafka + 100 + i, purpose: `Kafka controller ${i + 1}` },
    );
  return wanted;
}

/** `http://host:port`, with an IPv6 host in brackets. */
export function serviceOrigin(host: string, port: number): string {
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}
