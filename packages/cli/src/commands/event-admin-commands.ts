import { decodeContent } from "evb-client";
import type { CliContext } from "../cli-context.ts";
import { EXIT, UsageError } from "../exit-codes.ts";
import { table } from "./topic-commands.ts";

/**
 * `evb event search [--topic T|PATTERN] [--event-id ID] [--from TIME] [--to TIME]`: events with
 * their content, newest first (admin/events). The broker needs a topic, an event id, or both ends
 * of a time range.
 */
export async function eventSearchCommand(ctx: CliContext): Promise<number> {
  const { topic, from, to } = ctx.flags;
  if (topic === undefined && ctx.flags["event-id"] === undefined && (from === undefined || to === undefined))
    throw new UsageError("event search needs --topic, --event-id, or both --from and --to");
  const page = await ctx.client.events({
    topic,
    eventId: ctx.flags["event-id"],
    from: ctx.time("from", from),
    to: ctx.time("to", to),
    ...ctx.paging(),
  });
  ctx.print(page, () => {
    const rows = page.pageData.map((e) => ({
      at: e.eventTimeStamp,
      block: e.blockNumber,
      eventId: e.eventId,
      topic: e.topic,
      content: decodeContent(e),
    }));
    return `${table(rows)}\n(${page.pageData.length} of ${page.total >= 10_000 ? "10000 or more" : page.total} events)`;
  });
  return EXIT.OK;
}

/** `evb event deliveries <eventId>`: each live subscription the event's topic matches, its state there and every attempt. */
export async function eventDeliveriesCommand(ctx: CliContext): Promise<number> {
  const page = await ctx.client.eventDeliveries(ctx.arg(1, "eventId"), ctx.paging());
  ctx.print(page, () => {
    const rows = page.pageData.map((d) => {
      const last = d.attempts[0];
      return {
        subscription: d.subscriptionId,
        topic: d.topicName,
        state: d.state,
        attempts: d.attempts.length,
        last: last ? `${last.attemptTimeStamp} ${last.httpStatus ?? last.error}` : null,
        resends: d.resendsWaiting,
      };
    });
    return `${table(rows)}\n(${page.pageData.length} of ${page.total} subscriptions)`;
  });
  return EXIT.OK;
}

/** `evb event resend <eventId> <subscriptionId>`: sent again, out of order, marked `webhook-resend: true`. */
export async function eventResendCommand(ctx: CliContext): Promise<number> {
  const receipt = await ctx.client.resendEvent(ctx.arg(2, "subscriptionId"), ctx.arg(1, "eventId"));
  ctx.print(receipt, () => `resend ${receipt.resend} of ${receipt.eventId} to ${receipt.subscriptionId} queued`);
  return EXIT.OK;
}
