import { join } from "node:path";
import { redactUrl } from "@evb/config";
import { logTopicName, silentLogger } from "@evb/domain";
import { createKafka, ensureTopics, type KafkaSecurity } from "@evb/eventlog";
import { migrate, poolOptions } from "@evb/storage";
import pg from "pg";
import { type TakenPort, takenPorts } from "./port-holder.ts";
import { devSecrets } from "./dev-secrets.ts";
import type { Progress } from "./progress.ts";
import { untilReady } from "./readiness.ts";
import { type PlannedService, planServices, type StackCounts, type StackPorts, serviceOrigin, wantedPorts } from "./service-plan.ts";
import { LocalStack, type Stack } from "./stack.ts";
import { SupervisedService } from "./supervised-service.ts";

export interface BrokerStackOptions {
  /** Cache folder for jars, data and logs (STACK_DIR, default .cache). */
  dir: string;
  counts: StackCounts;
  ports: StackPorts;
  /** Use this Kafka (comma-separated host:port list) instead of starting one. */
  kafkaBrokers?: string | undefined;
  /** TLS and SASL towards that Kafka (KAFKA_SSL_*, KAFKA_SASL_*, which the services read too); none for the Kafka started here. */
  kafkaSecurity?: KafkaSecurity | undefined;
  /** Use this PostgreSQL / Redis when it answers; otherwise a private one is started. */
  databaseUrl: string;
  redisUrl: string;
  databaseSchema: string;
  topicPrefix: string;
  groups: readonly string[];
  /** Partitions per group log topic created here. */
  partitions: number;
  /** Replicas per log topic created here, told the services too; default min(3, Kafka brokers). */
  replicationFactor?: number | undefined;
  /** Where the notifiers may deliver callbacks (CALLBACK_ALLOWED_CIDRS). */
  callbackAllowedCidrs: string;
  /** The caller's WEBHOOK_SECRETS and SECRETS_KEY, if set; otherwise development ones are used (dev-secrets.ts). */
  secrets?: { WEBHOOK_SECRETS?: string | undefined; SECRETS_KEY?: string | undefined };
  progress: Progress;
}

/** What a started stack serves, for the ready message. */
export interface ReadyStack {
  infra: Pick<Stack, "kafkaBrokers" | "databaseUrl" | "redisUrl">;
  plan: readonly PlannedService[];
  ports: StackPorts;
  /** The development signing secret the callbacks are signed with, when no WEBHOOK_SECRETS was given. */
  devWebhookSecret?: string | null;
}

/**
 * The whole broker on one machine, as `npm start` runs it: Kafka, PostgreSQL and Redis (reused
 * when they answer, see `LocalStack`), the ledger's migrations and the group log topics, then
 * the indexers and notifiers, then the gateways, each a `SupervisedService` (restarted when it
 * dies), and finally the wait until every one is ready. `stop()` ends what was started, in
 * reverse order, at any moment: also in the middle of `start()`, which then rejects.
 */
export class BrokerStack {
  readonly plan: readonly PlannedService[];
  private readonly o: BrokerStackOptions;
  private readonly stack: LocalStack;
  private readonly services: SupervisedService[] = [];
  private stopping: Promise<void> | undefined;

  constructor(o: BrokerStackOptions) {
    this.o = o;
    this.plan = planServices(o.counts, o.ports);
    // Made before anything starts, so that a stop at any moment reaches what it has started.
    this.stack = new LocalStack({
      dir: o.dir,
      kafkaBrokers: o.kafkaBrokers,
      databaseUrl: o.databaseUrl,
      redisUrl: o.redisUrl,
      kafka: { brokers: o.counts.kafkaBrokers, basePort: o.ports.kafka, heap: "1g" },
      supervise: true,
      progress: o.progress,
    });
  }

  /**
   * The ports this stack needs that something already listens on. Another stack (another
   * checkout's npm start, a leftover service) on them would answer our health checks and make
   * this one look ready, so they are checked before anything starts.
   */
  takenPorts(): Promise<TakenPort[]> {
    const ownKafka = this.o.kafkaBrokers ? 0 : this.o.counts.kafkaBrokers;
    return takenPorts(this.o.ports.host, wantedPorts(this.plan, this.o.ports, ownKafka));
  }

  /** Starts everything and resolves once every service is ready; rejects when a step fails or a stop began (after which all is stopped or stopping). */
  async start(): Promise<ReadyStack> {
    const { o } = this;
    this.notStopping();
    const infra = await this.stack.start();
    this.notStopping();
    const replication = o.replicationFactor ?? Math.min(3, o.counts.kafkaBrokers);
    await this.prepare(infra, replication);
    this.notStopping();

    const secrets = devSecrets(join(o.dir, "dev-webhook-secret"), o.secrets ?? {}, {
      databaseUrl: infra.databaseUrl,
      schema: o.databaseSchema,
    });
    const common: Record<string, string> = {
      KAFKA_BROKERS: infra.kafkaBrokers,
      DATABASE_URL: infra.databaseUrl,
      REDIS_URL: infra.redisUrl,
      // Under the new name, so the services agree with the topics made here and warn no more.
      GROUP_IDS: o.groups.join(","),
      GROUPS: "",
      KAFKA_REPLICATION_FACTOR: String(replication),
      // The local stack delivers callbacks to receivers on this machine out of the box.
      CALLBACK_ALLOWED_CIDRS: o.callbackAllowedCidrs,
      // Signed callbacks and secrets sealed at rest out of the box, as a deployment should have them.
      WEBHOOK_SECRETS: secrets.webhookSecrets,
      SECRETS_KEY: secrets.secretsKey,
    };
    const origin = (p: PlannedService) => serviceOrigin(o.ports.host, p.port);
    for (const p of this.plan) {
      this.services.push(
        new SupervisedService({
          name: p.name,
          service: p.service,
          env: { ...common, ...p.env },
          // Started (and restarted) once alive; readiness is awaited below, as it may depend on others.
          healthUrl: `${origin(p)}/livez`,
          output: "prefixed",
          progress: o.progress,
        }),
      );
    }
    const backends = this.services.filter((c) => !c.name.startsWith("gateway-"));
    const gateways = this.services.filter((c) => c.name.startsWith("gateway-"));
    for (const batch of [backends, gateways]) {
      const results = await Promise.allSettled(batch.map((c) => c.start()));
      const failed = results.find((r) => r.status === "rejected");
      if (failed) throw (failed as PromiseRejectedResult).reason;
    }
    await untilReady(
      this.plan.map((p) => ({ name: p.name, origin: origin(p) })),
      { stopped: () => this.stopping !== undefined, progress: o.progress },
    );
    this.notStopping();
    return { infra, plan: this.plan, ports: o.ports, devWebhookSecret: secrets.shownWebhookSecret };
  }

  /** Stops the services (gateways first: they stop taking requests) and then the stack; idempotent (every call waits for the one stop). */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const c of [...this.services].reverse()) await c.stop();
      await this.stack.stop();
    })();
    return this.stopping;
  }

  /** The ledger's migrations and the group log topics, before any service starts. */
  private async prepare(infra: Stack, replication: number): Promise<void> {
    const { o } = this;
    const pool = new pg.Pool(poolOptions(infra.databaseUrl, o.databaseSchema, 1));
    o.progress("postgres: applying migrations…");
    try {
      await migrate(pool, o.databaseSchema, silentLogger);
    } finally {
      await pool.end();
    }
    this.notStopping();
    o.progress(`kafka: ensuring log topics for groups ${o.groups.join(",")}…`);
    await ensureTopics(
      createKafka({
        brokers: infra.kafkaBrokers.split(","),
        clientId: "evb-start",
        logger: silentLogger,
        ...(o.kafkaBrokers && o.kafkaSecurity ? { security: o.kafkaSecurity } : {}),
      }),
      o.groups.map((g) => logTopicName(o.topicPrefix, g)),
      o.partitions,
      replication,
    );
  }

  /** After each step of the start: once a stop has begun, nothing more may start. */
  private notStopping(): void {
    if (this.stopping) throw new StackStopping();
  }
}

/** `BrokerStack.start()` cut short by `stop()`: no failure, the stop it belongs to is under way. */
export class StackStopping extends Error {
  constructor() {
    super("the stack is stopping");
  }
}

/**
 * What `npm start` prints once the stack is ready: where the gateways answer (and how to try
 * them), the infrastructure in use (passwords hidden), and each service's health and metrics URLs.
 */
export function readyMessage(ready: ReadyStack, mounts: string): string {
  const { infra, plan, ports, devWebhookSecret } = ready;
  const url = (p: PlannedService) => serviceOrigin(ports.host, p.port);
  const gatewayUrls = plan.filter((p) => p.service === "gateway").map(url);
  const width = Math.max(...plan.map((p) => p.name.length));
  return (
    `ready: gateway ${gatewayUrls.join(", ")} (mounts ${mounts}); Kafka ${infra.kafkaBrokers}; ` +
    `Postgres ${redactUrl(infra.databaseUrl)}; Redis ${redactUrl(infra.redisUrl)}. Try: curl '${gatewayUrls[0]}/event-broker/admin/getVersion'. MQTT: mqtt://${ports.host}:${ports.mqtt}. Console: ${gatewayUrls[0]}/console/. Ctrl-C stops everything.\n` +
    `health (liveness /livez, readiness /readyz with the reason when not ready) and Prometheus metrics (/metrics):\n${plan
      .map((p) => `  ${p.name.padEnd(width)}  ${url(p)}/livez  ${url(p)}/readyz  ${url(p)}/metrics`)
      .join("\n")}` +
    (devWebhookSecret
      ? `\ncallbacks are signed with the development secret ${devWebhookSecret} (set WEBHOOK_SECRETS to use your own): evb listen --secret ${devWebhookSecret}`
      : "")
  );
}
