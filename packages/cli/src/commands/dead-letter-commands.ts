import { BrokerError, BrokerTransportError } from "@evb/client";
import type { CliContext } from "../cli-context.ts";
import { EXIT, UsageError } from "../exit-codes.ts";
import { table } from "./topic-commands.ts";

/** `evb dead-letters list`, `evb dead-letters replay [subscriptionId]` (all without an id). */
export async function deadLettersCommand(ctx: CliContext): Promise<number> {
  const sub = ctx.arg(0, "list|replay");
  if (sub === "list") {
    const list = await ctx.client.deadLetters();
    ctx.print(list, () =>
      table(
        list.map((d) => ({
          id: d.subscriptionId,
          topic: d.topicName,
          eventId: d.eventId,
          attempts: d.attempts,
          waiting: d.notifyingEventCount,
          since: d.deadTimeStamp,
          lastError: d.lastError,
        })),
      ),
    );
    return EXIT.OK;
  }
  if (sub === "replay") {
    const released = await ctx.client.replayDeadLetters(ctx.args[1]);
    ctx.print(released, () => (released.length === 0 ? "nothing to replay" : released.map((id) => `replayed ${id}`).join("\n")));
    return EXIT.OK;
  }
  throw new UsageError(`unknown dead-letters command "${sub}": list or replay`);
}

/**
 * `evb attempts [subscriptionId]`: recent delivery attempts (admin/deliveryAttempts). A broker
 * without that operation answers as for an unknown path; that is said plainly.
 */
export async function attemptsCommand(ctx: CliContext): Promise<number> {
  const id = ctx.args[0] ?? ctx.flags.subscription;
  let r: unknown;
  try {
    r = await ctx.client.call("admin/deliveryAttempts", { subscriptionId: id, groupId: ctx.flags.group });
  } catch (err) {
    const unknown =
      (err instanceof BrokerError && err.code === 200203 && /No handler found/.test(err.brokerMessage ?? "")) ||
      (err instanceof BrokerTransportError && err.status === 404);
    if (!unknown) throw err;
    ctx.err("this broker has no admin/deliveryAttempts operation (it came with a later version)");
    return EXIT.HTTP;
  }
  const rows = Array.isArray(r) ? r : ((r as { attempts?: unknown[] } | null)?.attempts ?? null);
  ctx.print(r, () =>
    Array.isArray(rows) && rows.every((x) => typeof x === "object" && x !== null)
      ? table(rows as Record<string, unknown>[])
      : JSON.stringify(r, null, 2),
  );
  return EXIT.OK;
}
