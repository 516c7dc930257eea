import { decodeContent } from "evb-client";
import type { CliContext } from "../cli-context.ts";
import { EXIT, UsageError } from "../exit-codes.ts";
import { eventDeliveriesCommand, eventResendCommand, eventSearchCommand } from "./event-admin-commands.ts";

const ADMIN: Record<string, (ctx: CliContext) => Promise<number>> = {
  search: eventSearchCommand,
  deliveries: eventDeliveriesCommand,
  resend: eventResendCommand,
};

/**
 * `evb event get <eventId>`: the event with its content decoded (`--json`: as the broker sent it);
 * `evb event search|deliveries|resend …`: the operator's views (event-admin-commands.ts).
 */
export async function eventCommand(ctx: CliContext): Promise<number> {
  const sub = ctx.arg(0, "get|search|deliveries|resend");
  const admin = ADMIN[sub];
  if (admin) return admin(ctx);
  if (sub !== "get") throw new UsageError(`unknown event command "${sub}": get, search, deliveries or resend`);
  const ev = await ctx.client.getEvent(ctx.arg(1, "eventId"));
  ctx.print(ev, () => {
    const lines = [`eventId   ${ev.eventId}`, `topic     ${ev.topic}`];
    for (const [k, v] of Object.entries(ev.extensions ?? {})) lines.push(`${k.padEnd(9)} ${v}`);
    lines.push(`content   ${decodeContent(ev)}`);
    return lines.join("\n");
  });
  return EXIT.OK;
}
