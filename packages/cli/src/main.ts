import { readFileSync } from "node:fs";
import { BrokerError, BrokerTransportError } from "evb-client";
import { CliContext, type Io } from "./cli-context.ts";
import { attemptsCommand, deadLettersCommand } from "./commands/dead-letter-commands.ts";
import { eventCommand } from "./commands/event-command.ts";
import { listenCommand } from "./commands/listen-command.ts";
import { publishCommand } from "./commands/publish-command.ts";
import { subCommand } from "./commands/sub-commands.ts";
import { topicCommand } from "./commands/topic-commands.ts";
import { verifyCommand } from "./commands/verify-command.ts";
import { EXIT, UsageError } from "./exit-codes.ts";

export const USAGE = `evb — the event broker's command line

Usage: evb [global flags] <command> [arguments] [flags]

Commands:
  topic open|close|exist|state <topic>
  topic list [--page-index N] [--page-size N]
  publish <topic> [content] [--ext event-key=value]...   (no content: one event per stdin line)
          [--idempotency-key KEY]   (with content: a retry with the same key stores nothing twice)
          [--concurrency N]   (stdin: up to N publishes in flight, default 1 (in order), at most 256)
          [--batch N]   (stdin: N lines per request (rest/publishBatch), in order, at most 1000;
                         with --concurrency, that many batches in flight)
  event get <eventId>
  event search [--topic TOPIC|PATTERN] [--event-id ID] [--from TIME] [--to TIME] [--page-index N] [--page-size N]
          (newest first, with content; needs --topic, --event-id, or both --from and --to;
           TIME: epoch ms or ISO-8601 with a zone, e.g. 2026-05-01T10:00:00Z; PATTERN: + one level, # the rest)
  event deliveries <eventId> [--page-index N] [--page-size N]
          (each live subscription the event's topic matches: delivered, pending, dead-lettered or
           before-start, with every attempt)
  event resend <eventId> <subscriptionId>
          (sent again through normal delivery, out of order, marked webhook-resend: true)
  sub add <topic|pattern> <url> [--id subscriptionId] [settings] [--paused]   (variants M and E)
  sub rm <subscriptionId>
  sub list [--node ip:port,...]
  sub settings <subscriptionId> [settings]   (shows them; with flags, changes them first)
          settings: --max-rate N (callbacks/s) --retry-max-attempts N --retry-base-ms MS
                    --retry-max-ms MS --window N; the value "default" goes back to the broker's;
                    --alert-url URL (signed alerts to the owner when the subscription fails,
                    is suspended and recovers; "none" removes it)
  sub pause|resume <subscriptionId>   (paused: nothing delivered, backlog and position kept)
  sub rotate-secret <subscriptionId> [--grace-ms MS]
          (a signing secret of its own, printed once; the previous one keeps signing for
           --grace-ms, by default a day)
  dead-letters list
  dead-letters replay [subscriptionId]                    (all without an id)
  dead-letters replay <subscriptionId> --from TIME | --from-event ID
          (deliver every event again from there, in order; never skips ahead)
  attempts <subscriptionId> [--page-index N] [--page-size N]   (recorded callback attempts)
  verify --secret S --body FILE (--headers FILE | -H 'webhook-id: ...' ...) [--tolerance SEC]
  listen [--port P] [--host H] [--secret S] [--subscribe PATTERN] [--callback-url URL]
         [--status CODE] [--save DIR]

Global flags (or environment EVB_URL, EVB_VARIANT, EVB_TOKEN, EVB_BASIC):
  --url URL        broker origin, default http://127.0.0.1:8080 (a URL with a path is used as is)
  --variant L|M|E  default M; the context path follows (/event-broker, /event-m, /event-e)
  --group ID       group id (default: the broker's "1")
  --token KEY      API key, sent as Authorization: Bearer
  --basic U:P      HTTP Basic credentials
  --timeout MS     per call, default 30000
  --json           JSON output (one value per line) for scripts
  --version, -V    print the CLI's version and exit

Exit codes: 0 ok; 1 broker error, publish not SUCCESS or signature invalid; 2 usage;
            3 no connection or timeout; 4 HTTP refusal (401, 403, 404) or unreadable reply.`;

const COMMANDS: Record<string, (ctx: CliContext) => Promise<number>> = {
  topic: topicCommand,
  publish: publishCommand,
  event: eventCommand,
  sub: subCommand,
  "dead-letters": deadLettersCommand,
  attempts: attemptsCommand,
  verify: verifyCommand,
  listen: listenCommand,
};

/** Runs one command line; resolves with the exit code (never throws). */
export async function main(argv: string[], io: Io, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let ctx: CliContext;
  try {
    ctx = new CliContext(argv, io, env);
  } catch (err) {
    io.stderr.write(`evb: ${(err as Error).message}\nRun evb --help for usage.\n`);
    return EXIT.USAGE;
  }
  const [name, ...rest] = ctx.args;
  if (ctx.flags.version && !ctx.flags.help) {
    io.stdout.write(`evb ${cliVersion()}\n`);
    return EXIT.OK;
  }
  if (ctx.flags.help || name === undefined || name === "help") {
    (name === undefined && !ctx.flags.help ? io.stderr : io.stdout).write(`${USAGE}\n`);
    return name === undefined && !ctx.flags.help ? EXIT.USAGE : EXIT.OK;
  }
  const command = COMMANDS[name];
  if (!command) {
    ctx.err(`evb: unknown command "${name}"\nRun evb --help for usage.`);
    return EXIT.USAGE;
  }
  ctx.args.splice(0, ctx.args.length, ...rest);
  try {
    return await command(ctx);
  } catch (err) {
    return report(ctx, err);
  }
}

/**
 * The version in this package's package.json, which every install has: one level up from the
 * sources in the repository, two from dist/src once packed.
 */
function cliVersion(): string {
  for (const up of ["../package.json", "../../package.json"]) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(up, import.meta.url), "utf8")) as { name?: unknown; version?: unknown };
      if (manifest.name === "evb-cli" && typeof manifest.version === "string") return manifest.version;
    } catch {
      // Not there: the other layout.
    }
  }
  return "unknown";
}

function report(ctx: CliContext, err: unknown): number {
  if (err instanceof UsageError) {
    ctx.err(`evb: ${err.message}\nRun evb --help for usage.`);
    return EXIT.USAGE;
  }
  if (err instanceof BrokerError) {
    if (ctx.json) ctx.out(JSON.stringify({ error: { code: err.code, message: err.brokerMessage, operation: err.operation } }));
    ctx.err(`evb: broker error ${err.code}: ${err.brokerMessage ?? "(no message)"} (${err.operation})`);
    return EXIT.REFUSED;
  }
  if (err instanceof BrokerTransportError) {
    ctx.err(`evb: ${err.message}`);
    return err.failure === "http" || err.failure === "reply" ? EXIT.HTTP : EXIT.CONNECTION;
  }
  ctx.err(`evb: ${(err as Error)?.stack ?? String(err)}`);
  return EXIT.REFUSED;
}
