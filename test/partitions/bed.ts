import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Child, KafkaCluster, PostgresServer, type Progress, RedisServer, type ServiceName, startServiceProcess } from "@evb/devstack";
import { BedNetwork } from "./net.ts";

/** The bed's hosts, in address order (`.10` upwards): the stores, three brokers, two of each service. */
const STORES = ["postgres", "redis"] as const;
const BROKERS = ["kafka-1", "kafka-2", "kafka-3"] as const;
export const SERVICES = ["indexer-1", "indexer-2", "notifier-1", "notifier-2", "gateway-1", "gateway-2"] as const;
export type ServiceHost = (typeof SERVICES)[number];

const PG_PORT = 5432;
const REDIS_PORT = 6379;
const KAFKA_PORT = 9092;
/** Every service listens (HTTP interface or health endpoint) on this port of its own host. */
export const SERVICE_PORT = 8080;

export interface BedOptions {
  /** The cache folder (`.cache`): the bed keeps its data and logs in `bed/` and `bed-kafka/` there, emptied at start, and shares the Kafka jars. */
  dir: string;
  progress: Progress;
  /** Extra environment for every service. */
  env?: Record<string, string>;
  /** The brokers' `broker.session.timeout.ms`; default 4 s, as docker-compose.yml. */
  brokerSessionMs?: number;
}

function serviceOf(host: ServiceHost): ServiceName {
  return host.slice(0, host.indexOf("-")) as ServiceName;
}

/**
 * Twelve hosts on one switch: Postgres, Redis, three Kafka brokers (replication 3,
 * `min.insync.replicas` 2), two indexers, two notifiers and two gateways, each in its own network
 * namespace, with this machine as the client. `stop()` ends every process and removes every
 * namespace, whatever state the bed is in.
 */
export class Bed {
  readonly net = new BedNetwork("evbp", "10.77.0");
  readonly env: Record<string, string>;
  private readonly children = new Map<ServiceHost, Child>();
  private pg: PostgresServer | undefined;
  private redis: RedisServer | undefined;
  kafka: KafkaCluster | undefined;

  private readonly opts: BedOptions;

  constructor(opts: BedOptions) {
    this.opts = opts;
    this.env = {};
  }

  get logDir(): string {
    return join(this.opts.dir, "bed", "logs");
  }

  url(host: ServiceHost): string {
    return `http://${this.net.host(host).ip}:${SERVICE_PORT}`;
  }

  async start(): Promise<void> {
    const { dir, progress } = this.opts;
    BedNetwork.requirePrerequisites();
    rmSync(join(dir, "bed"), { recursive: true, force: true });
    mkdirSync(this.logDir, { recursive: true });
    this.net.create([...STORES, ...BROKERS, ...SERVICES]);
    progress(`bed: 12 hosts on 10.77.0.0/24 (client ${this.net.clientIp})`);
    const place = (name: string) => ({ host: this.net.host(name).ip, netns: this.net.host(name).netns });
    this.pg = new PostgresServer(join(dir, "bed", "postgres"), PG_PORT, progress, false, place("postgres"));
    this.redis = new RedisServer(join(dir, "bed", "redis"), REDIS_PORT, progress, false, place("redis"));
    this.kafka = new KafkaCluster({
      dir: join(dir, "bed-kafka"),
      brokers: 3,
      basePort: KAFKA_PORT,
      fresh: true,
      heap: "512m",
      brokerSessionMs: this.opts.brokerSessionMs ?? 4_000,
      places: BROKERS.map(place),
      progress,
    });
    const [databaseUrl, redisUrl, brokers] = await Promise.all([this.pg.start(), this.redis.start(), this.kafka.start()]);
    Object.assign(this.env, {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      KAFKA_BROKERS: brokers.join(","),
      KAFKA_REPLICATION_FACTOR: "3",
      KAFKA_PARTITIONS: "3",
      HOST: "0.0.0.0",
      CALLBACK_ALLOWED_CIDRS: "10.77.0.0/24",
      // Only the bed's own hosts reach the gateways: that is their access control.
      API_ALLOWED_CIDRS: "10.77.0.0/24",
      LOG_LEVEL: "info",
      // A service that dies of a fatal error (out of memory) or an uncaught exception leaves a
      // diagnostic report (its stacks, heap and handles) beside its log, named in deathNote.
      NODE_OPTIONS: `--report-on-fatalerror --report-uncaught-exception --report-directory=${this.reportDir}`,
      ...this.opts.env,
    });
    // Indexers first: they apply the migrations and make the topics.
    for (const host of SERVICES) await this.startService(host);
  }

  /** Starts (or starts again, after a kill) one service on its host. */
  async startService(host: ServiceHost): Promise<void> {
    const service = serviceOf(host);
    const ordinal = host.slice(host.indexOf("-") + 1);
    const env: Record<string, string> = {
      ...this.env,
      ...(service === "gateway" ? { PORT: String(SERVICE_PORT) } : { HEALTH_PORT: String(SERVICE_PORT) }),
      ...(service === "indexer" ? { SEALER_INDEX: ordinal } : {}),
    };
    this.opts.progress(`bed: starting ${host} at ${this.url(host)}`);
    const child = await startServiceProcess({
      name: host,
      service,
      env,
      healthUrl: `${this.url(host)}/health`,
      output: { file: join(this.logDir, `${host}.log`) },
      netns: this.net.host(host).netns,
      timeoutMs: 120_000,
    });
    this.children.set(host, child);
  }

  /** SIGKILL: the process ends without a word, its host stays up (the kernel closes its sockets). */
  kill(host: ServiceHost): void {
    this.children.get(host)?.signal("SIGKILL");
  }

  /** Names of services that died without being killed by a scenario. */
  exited(): ServiceHost[] {
    return [...this.children].filter(([, c]) => !c.running).map(([h]) => h);
  }

  /** Each running service's resident memory now (MiB, from /proc), for the report's peaks. */
  residentMiB(): Map<ServiceHost, number> {
    const out = new Map<ServiceHost, number>();
    for (const [host, child] of this.children) {
      if (!child.running || child.pid === undefined) continue;
      try {
        const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1];
        if (kb) out.set(host, Math.round(Number(kb) / 1024));
      } catch {
        // gone between the two reads
      }
    }
    return out;
  }

  /** Where the services' diagnostic reports go (Node's --report-directory). */
  get reportDir(): string {
    return join(this.logDir, "reports");
  }

  /** How a dead service ended, the last lines it wrote and the gist of any diagnostic report, for the bed's failure message. */
  deathNote(host: ServiceHost): string {
    const child = this.children.get(host);
    if (!child) return `${host}: never started`;
    const lines = [`${host} ended with ${child.endedWith}; its last lines:`, child.lastOutput()];
    for (const file of existsSync(this.reportDir) ? readdirSync(this.reportDir) : []) {
      try {
        const r = JSON.parse(readFileSync(join(this.reportDir, file), "utf8")) as {
          header?: { event?: string; processId?: number };
          javascriptStack?: { message?: string; stack?: string[] };
          javascriptHeap?: { usedMemory?: number; totalMemory?: number };
        };
        const heapMb = Math.round((r.javascriptHeap?.usedMemory ?? 0) / 2 ** 20);
        lines.push(`diagnostic report ${file} (pid ${r.header?.processId}): ${r.header?.event ?? "?"}; heap used ${heapMb} MiB`);
        lines.push(r.javascriptStack?.message ?? "", ...(r.javascriptStack?.stack ?? []).slice(0, 12));
      } catch {
        lines.push(`diagnostic report ${file}: unreadable`);
      }
    }
    return lines.join("\n");
  }

  async stop(): Promise<void> {
    await Promise.all([...this.children.values()].map((c) => c.stop(5_000)));
    await this.kafka?.stop().catch(() => {});
    await this.redis?.stop().catch(() => {});
    await this.pg?.stop().catch(() => {});
    this.net.destroy();
  }
}
