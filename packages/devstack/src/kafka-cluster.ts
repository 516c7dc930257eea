import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Admin } from "@platformatic/kafka";
import { Child, lastLinesOf } from "./child.ts";
import { LOOPBACK, type Placement } from "./placement.ts";
import type { Progress } from "./progress.ts";
import { requireJavaAndMaven } from "./prerequisites.ts";
import { howItEnded, Supervised } from "./supervised.ts";

const POM = join(dirname(fileURLToPath(import.meta.url)), "..", "kafka", "pom.xml");

export interface KafkaClusterOptions {
  /** Folder for jars, configs, data and logs. */
  dir: string;
  /** 1 for a combined single node, 3 for a local 3-broker KRaft cluster. Default 1. */
  brokers?: number;
  /** Client port of broker 1; broker i listens on basePort + i - 1. Controllers use basePort + 100 + i - 1. */
  basePort?: number;
  /** Start from empty data folders (tests) instead of reusing the previous data (npm start). */
  fresh?: boolean;
  /**
   * Where each broker runs (index 0 is broker 1): its address and network namespace, for the
   * multi-host test bed. Default: every broker on 127.0.0.1.
   */
  places?: readonly Placement[];
  /**
   * How long a broker that stopped heartbeating keeps its leaderships (`broker.session.timeout.ms`,
   * ms). Kafka's 9 s is most of what a silent broker costs its clients; the multi-host bed and
   * docker-compose.yml use 4 s. Default: Kafka's own.
   */
  brokerSessionMs?: number;
  /** JVM heap cap per broker, e.g. `1g`. */
  heap?: string;
  /**
   * Restart a broker that dies, with the services' backoff, as the same node (id, ports, data
   * folder), so that it rejoins its cluster (npm start). Default false: failure tests kill
   * brokers and need them to stay down.
   */
  supervise?: boolean;
  /**
   * Listeners besides PLAINTEXT (which the brokers keep among themselves), for tests of the
   * clients' TLS and SASL: each on `port + id - 1` of broker `id`, with the broker settings they
   * need (`properties`, e.g. `listener.name.sasl_ssl.…`) and extra `kafka-storage format`
   * arguments (e.g. `--add-scram` to make SCRAM users before the first start). Default: none.
   */
  extra?: KafkaExtraListeners;
  progress: Progress;
}

/** See KafkaClusterOptions.extra. */
interface KafkaExtraListeners {
  listeners: Array<{ name: string; protocol: "SSL" | "SASL_SSL" | "SASL_PLAINTEXT"; port: number }>;
  properties: string[];
  formatArgs: string[];
}

/** Fetches the broker jars once (Maven, into `dir/libs`) and returns the classpath. */
export function ensureKafkaJars(dir: string, progress: Progress): string {
  const libs = join(dir, "libs");
  const stamp = join(libs, ".pom");
  const pom = readFileSync(POM, "utf8");
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === pom) return `${libs}/*`;
  requireJavaAndMaven();
  progress("kafka: fetching the Apache Kafka broker jars from Maven Central (first run only)…");
  rmSync(libs, { recursive: true, force: true });
  mkdirSync(libs, { recursive: true });
  const res = spawnSync(
    "mvn",
    ["-B", "-q", "-f", POM, "dependency:copy-dependencies", "-DincludeScope=runtime", `-DoutputDirectory=${libs}`],
    { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
  );
  if (res.status !== 0) {
    throw new Error(
      `Maven could not fetch the Kafka jars (exit ${res.status}). Check that Maven Central is reachable.\n${res.stdout}${res.stderr}`,
    );
  }
  if (!readdirSync(libs).some((f) => f.startsWith("kafka_2.13-"))) {
    throw new Error(`Maven finished but ${libs} holds no kafka_2.13 jar; delete ${libs} and retry.`);
  }
  writeFileSync(stamp, pom);
  return `${libs}/*`;
}

function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString("base64url");
    if (!id.startsWith("-")) return id;
  }
}

/**
 * A real Apache Kafka cluster (KRaft, combined broker+controller nodes) run from the Maven
 * Central jars. Readiness is checked with a client, never by reading logs. `stop()` may come at
 * any moment, also while `start()` is still waiting for the brokers: it ends every broker
 * started so far and `start()` rejects.
 */
/** A start step ended by a signal sent to the whole process group (Ctrl-C): a stop, not a failure. */
export class StartInterrupted extends Error {}

const NO_EXTRA: KafkaExtraListeners = { listeners: [], properties: [], formatArgs: [] };

export class KafkaCluster {
  private readonly nodes: Array<Supervised<Child>> = [];
  private readonly opts: Required<Omit<KafkaClusterOptions, "progress">> & { progress: Progress };
  private classpath = "";
  private stopped = false;

  constructor(opts: KafkaClusterOptions) {
    this.opts = {
      brokers: 1,
      basePort: 9092,
      fresh: false,
      heap: "1g",
      supervise: false,
      places: [],
      brokerSessionMs: 0,
      extra: NO_EXTRA,
      ...opts,
    };
  }

  /** Where broker `id` (1-based) runs. */
  private place(id: number): Placement {
    return this.opts.places[id - 1] ?? LOOPBACK;
  }

  get bootstrap(): string[] {
    const { brokers, basePort } = this.opts;
    return Array.from({ length: brokers }, (_, i) => `${this.place(i + 1).host}:${basePort + i}`);
  }

  private nodeDir(id: number): string {
    return join(this.opts.dir, this.opts.brokers === 1 ? "node" : `node-${id}`);
  }

  private properties(id: number): string {
    const { brokers, basePort } = this.opts;
    const voters = Array.from({ length: brokers }, (_, i) => `${i + 1}@${this.place(i + 1).host}:${basePort + 100 + i}`).join(",");
    const host = this.place(id).host;
    const rf = Math.min(3, brokers);
    const minIsr = brokers >= 3 ? 2 : 1;
    const extra = this.opts.extra.listeners;
    const more = extra.map((l) => `,${l.name}://${host}:${l.port + id - 1}`).join("");
    const protocols = extra.map((l) => `,${l.name}:${l.protocol}`).join("");
    return [
      "process.roles=broker,controller",
      `node.id=${id}`,
      `controller.quorum.voters=${voters}`,
      "controller.listener.names=CONTROLLER",
      `listeners=PLAINTEXT://${host}:${basePort + id - 1},CONTROLLER://${host}:${basePort + 100 + id - 1}${more}`,
      `advertised.listeners=PLAINTEXT://${host}:${basePort + id - 1}${more}`,
      "inter.broker.listener.name=PLAINTEXT",
      `listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT${protocols}`,
      ...this.opts.extra.properties,
      `log.dirs=${join(this.nodeDir(id), "data")}`,
      "num.partitions=1",
      `default.replication.factor=${rf}`,
      `min.insync.replicas=${minIsr}`,
      `offsets.topic.replication.factor=${rf}`,
      "offsets.topic.num.partitions=4",
      `transaction.state.log.replication.factor=${rf}`,
      `transaction.state.log.min.isr=${minIsr}`,
      "transaction.state.log.num.partitions=4",
      `share.coordinator.state.topic.replication.factor=${rf}`,
      `share.coordinator.state.topic.min.isr=${minIsr}`,
      "group.initial.rebalance.delay.ms=0",
      "num.network.threads=2",
      "num.io.threads=2",
      "auto.create.topics.enable=false",
      ...(this.opts.brokerSessionMs > 0
        ? [
            `broker.session.timeout.ms=${this.opts.brokerSessionMs}`,
            `broker.heartbeat.interval.ms=${Math.max(500, Math.floor(this.opts.brokerSessionMs / 6))}`,
          ]
        : []),
      "",
    ].join("\n");
  }

  private log4j(id: number): string {
    const logs = join(this.nodeDir(id), "logs");
    return [
      "status = warn",
      "appender.file.type = File",
      "appender.file.name = FILE",
      `appender.file.fileName = ${join(logs, "server.log")}`,
      "appender.file.layout.type = PatternLayout",
      "appender.file.layout.pattern = [%d] %p %m (%c)%n",
      "rootLogger.level = INFO",
      "rootLogger.appenderRef.file.ref = FILE",
      "logger.kafka.name = kafka",
      "logger.kafka.level = WARN",
      "logger.apache.name = org.apache.kafka",
      "logger.apache.level = WARN",
      "",
    ].join("\n");
  }

  async start(): Promise<string[]> {
    const { dir, brokers, fresh, progress } = this.opts;
    if (this.stopped) throw new Error("Kafka was stopped before it started");
    mkdirSync(dir, { recursive: true });
    const cp = ensureKafkaJars(join(dir, "..", "kafka-jars"), progress);
    // Kept for restarts, which must run the broker exactly as it first ran.
    this.classpath = cp;
    const idFile = join(dir, "cluster-id");
    if (fresh) {
      for (let id = 1; id <= brokers; id++) rmSync(this.nodeDir(id), { recursive: true, force: true });
      rmSync(idFile, { force: true });
    }
    if (!existsSync(idFile)) writeFileSync(idFile, clusterId());
    const cid = readFileSync(idFile, "utf8").trim();
    progress(`kafka: starting ${brokers} broker(s) on ${this.bootstrap.join(",")}…`);
    for (let id = 1; id <= brokers; id++) {
      const nd = this.nodeDir(id);
      mkdirSync(join(nd, "logs"), { recursive: true });
      writeFileSync(join(nd, "server.properties"), this.properties(id));
      writeFileSync(join(nd, "log4j2.properties"), this.log4j(id));
      const fmt = spawnSync(
        "java",
        [
          "-Xmx256m",
          "-cp",
          cp,
          "kafka.tools.StorageTool",
          "format",
          "-t",
          cid,
          "-c",
          join(nd, "server.properties"),
          "--ignore-formatted",
          ...this.opts.extra.formatArgs,
        ],
        { encoding: "utf8" },
      );
      // Ended by a signal: the terminal's Ctrl-C reaches the whole foreground group, this JVM too,
      // before npm start's own handler can run (the format is synchronous). That is a stop.
      if (fmt.signal !== null) throw new StartInterrupted(`Kafka storage format for broker ${id} was ended by ${fmt.signal}`);
      if (fmt.status !== 0) {
        throw new Error(
          `Kafka storage format failed for broker ${id} (exit ${fmt.status}): ${fmt.stderr || fmt.stdout}\n` +
            `If the data folder belongs to another cluster, delete ${nd} and retry.`,
        );
      }
    }
    // The formats above run synchronously, so a stop() asked for meanwhile is seen only now.
    if (this.stopped) throw new Error("Kafka was stopped while it started");
    for (let id = 1; id <= brokers; id++) {
      this.nodes.push(
        new Supervised<Child>({
          name: `kafka-${id}`,
          progress,
          restart: this.opts.supervise,
          launch: (onSpawn) => this.launchBroker(id, onSpawn),
        }),
      );
    }
    await Promise.all(this.nodes.map((n) => n.start()));
    progress(`kafka: ready (${brokers} broker(s))`);
    return this.bootstrap;
  }

  /**
   * Spawns broker `id` with the configuration and data folder `start()` prepared (so a restart
   * is the same node of the same cluster) and resolves once the cluster lists it.
   */
  private async launchBroker(id: number, onSpawn: (c: Child) => void): Promise<Child> {
    const nd = this.nodeDir(id);
    const child = new Child({
      name: `kafka-${id}`,
      command: "java",
      args: [
        "-Xms128m",
        `-Xmx${this.opts.heap}`,
        "-XX:+UseG1GC",
        "-XX:MaxGCPauseMillis=20",
        "-Djava.awt.headless=true",
        `-Dlog4j2.configurationFile=${join(nd, "log4j2.properties")}`,
        `-Dkafka.logs.dir=${join(nd, "logs")}`,
        "-cp",
        this.classpath,
        "kafka.Kafka",
        join(nd, "server.properties"),
      ],
      output: { file: join(nd, "logs", "stdout.log") },
      netns: this.place(id).netns,
      // A broker flushes its logs and hands over leadership on SIGTERM; give it the time.
      stopGraceMs: 20_000,
    });
    onSpawn(child);
    await this.untilRegistered(id, child, 120_000);
    return child;
  }

  /** Broker i (1-based) as a child process, for failure tests. */
  broker(id: number): Child | undefined {
    return this.nodes[id - 1]?.child;
  }

  /** Starts again a broker that a failure test stopped or killed (in a cluster that does not supervise its brokers). */
  async restartBroker(id: number): Promise<void> {
    await this.nodes[id - 1]?.start();
  }

  private async untilRegistered(id: number, child: Child, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const own = this.bootstrap[id - 1] as string;
    let last: unknown;
    while (Date.now() < deadline) {
      if (!child.running) {
        const code = await child.exited;
        // The last output names the cause (a port in use, a bad setting); log4j writes it to
        // server.log, which the error quotes, since the folder may be gone by the time anyone looks.
        throw new Error(
          `Kafka broker ${child.name} ${howItEnded(child, code)} during start; ` +
            `see ${this.nodeDir(id)}/logs/server.log and stdout.log. Its last output:\n${child.lastOutput()}\n` +
            `The end of its server.log:\n${lastLinesOf(join(this.nodeDir(id), "logs", "server.log"), 15)}`,
        );
      }
      // Asked of this broker alone, once per look: the loop is the retry.
      const admin = new Admin({
        clientId: "devstack-probe",
        bootstrapBrokers: [own],
        retries: 0,
        connectTimeout: 1_000,
        requestTimeout: 3_000,
      });
      try {
        const cluster = await admin.metadata({ topics: [], forceUpdate: true });
        if (cluster.brokers.has(id) && cluster.controllerId >= 0) return;
        last = new Error(`broker ${id} is not registered yet (${cluster.brokers.size}/${this.opts.brokers} brokers are)`);
      } catch (err) {
        last = err;
      } finally {
        await admin.close().catch(() => {});
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    await child.stop();
    throw new Error(
      `Kafka broker ${child.name} did not register within ${timeoutMs} ms: ${String(last)}; logs in ${this.nodeDir(id)}/logs`,
    );
  }

  /** Stops every broker, also one still starting or waiting to be restarted; idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.nodes.map((n) => n.stop()));
  }
}
