import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { type CallbackBody, decodeContent, type VerifyWebhookResult, verifyWebhook } from "evb-client";
import type { CliContext } from "../cli-context.ts";
import { EXIT } from "../exit-codes.ts";
import { subscribingClient } from "./sub-commands.ts";

const SIGNATURE_HEADERS = ["webhook-id", "webhook-timestamp", "webhook-signature"] as const;

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/**
 * `evb listen [--port P] [--host H] [--secret S] [--subscribe PATTERN] [--callback-url URL]
 * [--status CODE] [--save DIR]`: a local callback receiver. It prints each callback, checks its
 * signature when given a secret (a bad one is answered 401, so the broker retries), and with
 * `--subscribe` subscribes itself and unsubscribes on Ctrl-C.
 */
export async function listenCommand(ctx: CliContext): Promise<number> {
  const secrets = ctx.flags.secret ?? [];
  const status = ctx.int("status", ctx.flags.status ?? "200", 100);
  const host = ctx.flags.host ?? "127.0.0.1";
  const client = ctx.flags.subscribe === undefined ? undefined : subscribingClient(ctx);
  if (ctx.flags.save) mkdirSync(ctx.flags.save, { recursive: true });
  const server = createServer(callbackReceiver(ctx, secrets, status));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(ctx.flags.port === undefined ? 0 : ctx.int("port", ctx.flags.port), host, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  const url = ctx.flags["callback-url"] ?? `http://${host.includes(":") ? `[${host}]` : host}:${port}/`;
  ctx.err(`listening on ${url} (Ctrl-C to stop)`);
  let subscriptionId: string | undefined;
  if (client && ctx.flags.subscribe !== undefined) {
    try {
      subscriptionId = await client.subscribe(ctx.flags.subscribe, url, { subscriptionId: ctx.flags.id });
    } catch (err) {
      server.close();
      throw err;
    }
    ctx.err(`subscribed ${subscriptionId} to ${ctx.flags.subscribe}`);
  }
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  if (client && subscriptionId) {
    try {
      await client.unSubscribe(subscriptionId);
      ctx.err(`unsubscribed ${subscriptionId}`);
    } catch (err) {
      ctx.err(`could not unsubscribe ${subscriptionId}: ${(err as Error).message}`);
    }
  }
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  ctx.err("stopped");
  return EXIT.OK;
}

/**
 * Answers each callback (`status`, or 401 when a secret is given and its signature is bad, so
 * that the broker retries), saves it with `--save` and prints it, numbered in arrival order.
 */
function callbackReceiver(ctx: CliContext, secrets: string[], status: number): RequestListener {
  let n = 0;
  return async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req).catch(() => Buffer.alloc(0));
    const seq = ++n;
    const verdict =
      secrets.length === 0
        ? null
        : verifyWebhook({ secret: secrets, headers: req.headers as Record<string, string>, body: new Uint8Array(body) });
    const answer = verdict && !verdict.ok ? 401 : status;
    res.writeHead(answer, { "content-type": "text/plain" }).end(answer < 300 ? "ok" : "rejected");
    if (ctx.flags.save) saveCallback(ctx.flags.save, seq, req, body);
    printCallback(ctx, { seq, req, body, verdict, answer });
  };
}

/** `<seq>.body` (the raw body) and `<seq>.headers` (the signature headers) in `dir`. */
function saveCallback(dir: string, seq: number, req: IncomingMessage, body: Buffer): void {
  writeFileSync(join(dir, `${seq}.body`), body);
  const lines = SIGNATURE_HEADERS.filter((h) => req.headers[h] !== undefined).map((h) => `${h}: ${req.headers[h]}`);
  writeFileSync(join(dir, `${seq}.headers`), `${lines.join("\n")}\n`);
}

interface ReceivedCallback {
  seq: number;
  req: IncomingMessage;
  body: Buffer;
  /** The signature check, or null when no secret was given. */
  verdict: VerifyWebhookResult | null;
  /** The HTTP status it was answered with. */
  answer: number;
}

/** One line per callback (its event, or the start of a body that is not one), or its JSON with `--json`. */
function printCallback(ctx: CliContext, { seq, req, body, verdict, answer }: ReceivedCallback): void {
  let parsed: CallbackBody | undefined;
  try {
    parsed = JSON.parse(body.toString("utf8")) as CallbackBody;
  } catch {
    parsed = undefined;
  }
  const sig = verdict === null ? "not checked" : verdict.ok ? "signature ok" : `signature BAD (${verdict.reason})`;
  ctx.print(
    {
      n: seq,
      webhookId: req.headers["webhook-id"] ?? null,
      verified: verdict === null ? null : verdict.ok,
      answered: answer,
      body: parsed ?? body.toString("utf8"),
    },
    () => {
      const ev = parsed?.event;
      if (!ev) return `#${seq} ${req.method} ${req.url} (not a broker callback) ${body.toString("utf8").slice(0, 200)}`;
      return `#${seq} ${ev.topic} ${ev.eventId} [${sig}] ${decodeContent(ev)}`;
    },
  );
}
