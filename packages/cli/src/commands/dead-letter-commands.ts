import { BrokerError, BrokerTransportError } from "evb-client";
import type { CliContext } from "../cli-context.ts";
import { EXIT, UsageError } from "../exit-codes.ts";
import { table } from "./topic-commands.ts";

/**
 * `evb dead-letters list`, `evb dead-letters replay [subscriptionId]` (all without an id), and
 * `evb dead-letters replay <subscriptionId> --from TIME | --from-event ID` (a live subscription
 * delivered again from there, in order).
 */
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
    const from = ctx.time("from", ctx.flags.from);
    const fromEvent = ctx.flags["from-event"];
    if (from !== undefined || fromEvent !== undefined) {
      const id = ctx.arg(1, "subscriptionId");
      if (from !== undefined && fromEvent !== undefined) throw new UsageError("give --from or --from-event, not both");
      const replayed = await ctx.client.replayFrom(id, fromEvent !== undefined ? { eventId: fromEvent } : { time: from as number });
      ctx.print(replayed, () => replayed.map((r) => `replaying ${r}`).join("\n"));
      return EXIT.OK;
    }
    const released = await ctx.client.replayDeadLetters(ctx.args[1]);
    ctx.print(released, () => (released.length === 0 ? "nothing to replay" : released.map((id) => `replayed ${id}`).join("\n")));
    return EXIT.OK;
  }
  throw new UsageError(`unknown dead-letters command "${sub}": list or replay`);
}

/**
 * `evb attempts <subscriptionId> [--page-index N] [--page-size N]`: the subscription's recorded
 * callback attempts, newest first (admin/deliveryAttempts; pages counted from 1). A broker
 * without that operation answers as for an unknown path; that is said plainly.
 */
export async function attemptsCommand(ctx: CliContext): Promise<number> {
  const id = ctx.arg(0, "subscriptionId");
  let page: Awaited<ReturnType<typeof ctx.client.deliveryAttempts>>;
  try {
    page = await ctx.client.deliveryAttempts(id, ctx.paging());
  } catch (err) {
    const unknown =
      (err instanceof BrokerError && err.code === 200203 && /No handler found/.test(err.brokerMessage ?? "")) ||
      (err instanceof BrokerTransportError && err.status === 404);
    if (!unknown) throw err;
    ctx.err("evb: this broker has no admin/deliveryAttempts operation (it came with a later version)");
    return EXIT.HTTP;
  }
  ctx.print(page, () => {
    const rows = page.pageData.map((a) => ({
      at: a.attemptTimeStamp,
      eventId: a.eventId,
      result: a.delivered ? "delivered" : "failed",
      status: a.httpStatus,
      ms: a.durationMs,
      error: a.error,
    }));
    return `${table(rows)}\n(${page.pageData.length} of ${page.total} attempts)`;
  });
  return EXIT.OK;
}
