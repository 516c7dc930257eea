import { decodeContent } from "@evb/client";
import type { CliContext } from "../cli-context.ts";
import { EXIT, UsageError } from "../exit-codes.ts";

/** `evb event get <eventId>`: the event with its content decoded (`--json`: as the broker sent it). */
export async function eventCommand(ctx: CliContext): Promise<number> {
  const sub = ctx.arg(0, "get");
  if (sub !== "get") throw new UsageError(`unknown event command "${sub}": get`);
  const ev = await ctx.client.getEvent(ctx.arg(1, "eventId"));
  ctx.print(ev, () => {
    const lines = [`eventId   ${ev.eventId}`, `topic     ${ev.topic}`];
    for (const [k, v] of Object.entries(ev.extensions ?? {})) lines.push(`${k.padEnd(9)} ${v}`);
    lines.push(`content   ${decodeContent(ev)}`);
    return lines.join("\n");
  });
  return EXIT.OK;
}
