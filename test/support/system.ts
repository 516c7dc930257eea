import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Child, freePort, type ServiceName, startServiceProcess } from "@evb/devstack";
import { dropTestData, isolatedEnv } from "./isolation.ts";

const LOG_DIR = join(import.meta.dirname, "..", "..", ".cache", "test-logs");

export interface SystemOptions {
  gateways?: number;
  indexers?: number;
  /** SEALER_INDEX of the first indexer; the others count up from it (default 0). */
  sealerIndexBase?: number;
  notifiers?: number;
  /** Extra environment for every service (e.g. GROUP_IDS, PUBLISH_TIMEOUT_MS). */
  env?: Record<string, string>;
  /** Extra environment for the indexers only (e.g. a DATABASE_URL through a relay). */
  indexerEnv?: Record<string, string>;
  /** Extra environment for the gateways only. */
  gatewayEnv?: Record<string, string>;
  /** Extra environment for the notifiers only. */
  notifierEnv?: Record<string, string>;
}

interface Running {
  name: string;
  service: ServiceName;
  env: Record<string, string>;
  healthUrl: string;
  child: Child;
}

/**
 * A whole isolated broker as real child processes (the same entry points `npm start` runs), so
 * that tests can SIGKILL and restart any one of them. Logs go to .cache/test-logs/<name>.log.
 */
/**
 * Local callbacks that give up fast (two attempts 40–100 ms apart) and a notifier that polls
 * often, for suites that walk a subscription through delivery and dead letters quickly.
 */
export const QUICK_CALLBACKS_ENV: Readonly<Record<string, string>> = {
  CALLBACK_ALLOWED_CIDRS: "127.0.0.0/8",
  RETRY_BASE_MS: "40",
  RETRY_MAX_MS: "100",
  RETRY_MAX_ATTEMPTS: "2",
  NOTIFIER_POLL_MS: "200",
  NOTIFIER_SWEEP_MS: "1000",
};

export class TestSystem {
  readonly env: Record<string, string>;
  readonly gatewayUrls: string[] = [];
  private readonly procs = new Map<string, Running>();
  private readonly tag: string;

  private constructor(env: Record<string, string>) {
    this.env = env;
    this.tag = env.REDIS_PREFIX as string;
  }

  static async start(opts: SystemOptions = {}): Promise<TestSystem> {
    mkdirSync(LOG_DIR, { recursive: true });
    const sys = new TestSystem(isolatedEnv(opts.env));
    try {
      // Indexers first: they apply migrations and create the log topics.
      for (let i = 1; i <= (opts.indexers ?? 1); i++)
        await sys.spawn(`indexer-${i}`, "indexer", { ...opts.indexerEnv, SEALER_INDEX: String((opts.sealerIndexBase ?? 0) + i - 1) });
      for (let i = 1; i <= (opts.notifiers ?? 0); i++) await sys.spawn(`notifier-${i}`, "notifier", opts.notifierEnv ?? {});
      for (let i = 1; i <= (opts.gateways ?? 1); i++) await sys.spawn(`gateway-${i}`, "gateway", opts.gatewayEnv ?? {});
    } catch (err) {
      await sys.stop();
      throw err;
    }
    return sys;
  }

  private async spawn(name: string, service: ServiceName, extra: Record<string, string>): Promise<void> {
    // A port found free can be taken by some process's outgoing connection before the child
    // binds it; a fresh port then settles it.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      // HOST may be overridden (e.g. "::" to be reached on another interface); the health check
      // and gatewayUrls still use 127.0.0.1.
      const env = {
        ...this.env,
        HOST: "127.0.0.1",
        ...extra,
        ...(service === "gateway" ? { PORT: String(port) } : { HEALTH_PORT: String(port) }),
      };
      const scheme = service === "gateway" && extra.TLS_CERT_FILE ? "https" : "http";
      const healthUrl = `${scheme}://127.0.0.1:${port}/health`;
      try {
        const child = await startServiceProcess({
          name,
          service,
          env,
          healthUrl,
          output: { file: join(LOG_DIR, `${this.tag}-${name}.log`) },
        });
        this.procs.set(name, { name, service, env, healthUrl, child });
        break;
      } catch (err) {
        if (attempt >= 3 || !/EADDRINUSE/.test(String(err))) throw err;
      }
    }
    const url = new URL((this.procs.get(name) as Running).healthUrl).origin;
    if (service === "gateway" && !this.gatewayUrls.includes(url)) this.gatewayUrls.push(url);
  }

  /** Starts one more gateway with extra environment of its own (e.g. another BRAND or VARIANTS); its base URL. */
  async addGateway(name: string, env: Record<string, string>): Promise<string> {
    await this.spawn(name, "gateway", env);
    return this.originOf(name);
  }

  /** Starts one more notifier with extra environment of its own (e.g. another SECRETS_KEY). */
  async addNotifier(name: string, env: Record<string, string>): Promise<void> {
    await this.spawn(name, "notifier", env);
  }

  /** The base URL (`http://127.0.0.1:<port>`) of a process's health endpoint (for a gateway, its HTTP interface). */
  originOf(name: string): string {
    const p = this.procs.get(name);
    if (!p) throw new Error(`no process ${name}`);
    return new URL(p.healthUrl).origin;
  }

  /** The file a process logs to. */
  logFileOf(name: string): string {
    return join(LOG_DIR, `${this.tag}-${name}.log`);
  }

  /** The health URL a process answers on (its origin serves /livez and /readyz too). */
  healthUrlOf(name: string): string {
    const p = this.procs.get(name);
    if (!p) throw new Error(`no process ${name}`);
    return p.healthUrl;
  }

  get gatewayUrl(): string {
    return this.gatewayUrls[0] as string;
  }

  /** Names of the processes that have exited since they were started (none, while all is well). */
  exitedProcesses(): string[] {
    return [...this.procs.values()].filter((p) => !p.child.running).map((p) => p.name);
  }

  /** SIGKILL: no shutdown hook runs, as in a power cut of that process. */
  async kill(name: string): Promise<void> {
    const p = this.procs.get(name);
    if (!p) throw new Error(`no process ${name}`);
    p.child.signal("SIGKILL");
    await p.child.exited;
  }

  /** Sends `signal` to a process (e.g. SIGHUP: a gateway with TLS reloads its certificate). */
  signal(name: string, signal: NodeJS.Signals): void {
    const p = this.procs.get(name);
    if (!p) throw new Error(`no process ${name}`);
    p.child.signal(signal);
  }

  /** Starts a killed process again with the same environment and port. */
  async restart(name: string): Promise<void> {
    const p = this.procs.get(name);
    if (!p) throw new Error(`no process ${name}`);
    const child = await startServiceProcess({
      name,
      service: p.service,
      env: p.env,
      healthUrl: p.healthUrl,
      output: { file: join(LOG_DIR, `${this.tag}-${name}.log`) },
    });
    this.procs.set(name, { ...p, child });
  }

  /**
   * Stops every process, then removes this system's schema and Redis keys so that repeated runs
   * on one machine do not pile them up (set KEEP_TEST_DATA=1 to keep them for a post-mortem;
   * the service logs stay in .cache/test-logs either way).
   */
  async stop(): Promise<void> {
    const order = [...this.procs.values()].reverse();
    await Promise.all(order.map((p) => p.child.stop(5000)));
    if (process.env.KEEP_TEST_DATA === "1") return;
    await dropTestData(this.env);
  }
}
