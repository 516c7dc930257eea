import { parseArgs } from "node:util";
import { type BrokerClient, createClient, type Variant } from "evb-client";
import { UsageError } from "./exit-codes.ts";

export interface Io {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

/** Every flag of every command; a flag a command does not use is ignored. */
const OPTIONS = {
  url: { type: "string" },
  variant: { type: "string" },
  group: { type: "string" },
  token: { type: "string" },
  basic: { type: "string" },
  json: { type: "boolean" },
  timeout: { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "V" },
  "page-index": { type: "string" },
  "page-size": { type: "string" },
  ext: { type: "string", multiple: true },
  "idempotency-key": { type: "string" },
  concurrency: { type: "string" },
  batch: { type: "string" },
  id: { type: "string" },
  node: { type: "string" },
  secret: { type: "string", multiple: true },
  body: { type: "string" },
  headers: { type: "string" },
  header: { type: "string", short: "H", multiple: true },
  tolerance: { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  subscribe: { type: "string" },
  "callback-url": { type: "string" },
  status: { type: "string" },
  save: { type: "string" },
  subscription: { type: "string" },
  topic: { type: "string" },
  "event-id": { type: "string" },
  from: { type: "string" },
  to: { type: "string" },
  "from-event": { type: "string" },
  "max-rate": { type: "string" },
  "retry-max-attempts": { type: "string" },
  "retry-base-ms": { type: "string" },
  "retry-max-ms": { type: "string" },
  window: { type: "string" },
  paused: { type: "boolean" },
  "grace-ms": { type: "string" },
  "alert-url": { type: "string" },
} as const;

export type Flags = ReturnType<typeof parseFlags>["values"];

function parseFlags(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

const CONTEXT_PATH: Record<Variant, string> = { L: "/event-broker", M: "/event-m", E: "/event-e" };

/** What a command runs with: parsed flags, its positional arguments, the client, output helpers. */
export class CliContext {
  readonly flags: Flags;
  readonly args: string[];
  readonly io: Io;
  readonly variant: Variant;
  private clientInstance?: BrokerClient;

  constructor(argv: string[], io: Io, env: NodeJS.ProcessEnv) {
    const { values, positionals } = parseFlags(argv);
    this.flags = { ...values, url: values.url ?? env.EVB_URL, token: values.token ?? env.EVB_TOKEN, basic: values.basic ?? env.EVB_BASIC };
    this.args = positionals;
    this.io = io;
    const v = (values.variant ?? env.EVB_VARIANT ?? "M").toUpperCase();
    if (v !== "L" && v !== "M" && v !== "E") throw new UsageError(`--variant must be L, M or E, not "${values.variant}"`);
    this.variant = v;
  }

  get json(): boolean {
    return this.flags.json === true;
  }

  /**
   * The variant's base URL: `--url` as given when it has a path, else the origin plus the
   * variant's default context path (/event-broker, /event-m, /event-e).
   */
  baseUrl(): string {
    const raw = this.flags.url ?? "http://127.0.0.1:8080";
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new UsageError(`--url "${raw}" is not a URL (e.g. http://127.0.0.1:8080)`);
    }
    if (url.pathname === "/" || url.pathname === "") return `${url.origin}${CONTEXT_PATH[this.variant]}`;
    return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
  }

  get client(): BrokerClient {
    this.clientInstance ??= createClient(this.variant, {
      baseUrl: this.baseUrl(),
      token: this.flags.token,
      basic: this.flags.basic,
      groupId: this.flags.group,
      timeoutMs: this.flags.timeout === undefined ? undefined : this.int("timeout", this.flags.timeout, 1),
    });
    return this.clientInstance;
  }

  /** The positional argument at `i` (after the command words), or a usage error naming it. */
  arg(i: number, name: string): string {
    const v = this.args[i];
    if (v === undefined) throw new UsageError(`missing <${name}>`);
    return v;
  }

  /** `--page-index` (from 1) and `--page-size`, each undefined when not given (the broker's default). */
  paging(): { pageNumber?: number; pageSize?: number } {
    const index = this.flags["page-index"];
    const size = this.flags["page-size"];
    return {
      pageNumber: index === undefined ? undefined : this.int("page-index", index, 1),
      pageSize: size === undefined ? undefined : this.int("page-size", size, 1),
    };
  }

  /** A time flag: epoch milliseconds or an ISO-8601 date-time with a zone; undefined when not given. */
  time(flag: string, value: string | undefined): number | undefined {
    if (value === undefined) return undefined;
    const ms = /^\d+$/.test(value) ? Number(value) : /[zZ]|[+-]\d{2}:?\d{2}$/.test(value) ? Date.parse(value) : Number.NaN;
    if (Number.isNaN(ms))
      throw new UsageError(`--${flag} needs epoch milliseconds or an ISO-8601 time with a zone, e.g. 2026-05-01T10:00:00Z`);
    return ms;
  }

  int(flag: string, value: string, min = 0): number {
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`--${flag} must be an integer ≥ ${min}, not "${value}"`);
    return n;
  }

  out(line: string): void {
    this.io.stdout.write(`${line}\n`);
  }

  err(line: string): void {
    this.io.stderr.write(`${line}\n`);
  }

  /** `--json`: the value as one JSON line; otherwise the human text. */
  print(value: unknown, human: () => string): void {
    this.out(this.json ? JSON.stringify(value) : human());
  }
}
