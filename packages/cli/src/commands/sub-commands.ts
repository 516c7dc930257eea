import type { BrokerClient, SubscriptionRecordE } from "evb-client";
import type { CliContext } from "../cli-context.ts";
import { EXIT, UsageError } from "../exit-codes.ts";
import { settingsCommand, settingsFlags } from "./settings-commands.ts";
import { table } from "./topic-commands.ts";

/** The client when its variant takes subscriptions (M, E); a usage error for L. */
export function subscribingClient(ctx: CliContext) {
  const c = ctx.client;
  if (c.variant === "L") throw new UsageError("variant L has no callback subscriptions: use --variant M or E");
  return c;
}

interface Row {
  node: string;
  record: SubscriptionRecordE;
}

async function listAll(c: BrokerClient, nodeFlag: string | undefined): Promise<Row[]> {
  const rows: Row[] = [];
  const add = (node: string, records: Iterable<SubscriptionRecordE>) => {
    for (const record of records) rows.push({ node, record });
  };
  if (c.variant === "E") {
    for (const [node, byId] of Object.entries(await c.listSubscription())) add(node, Object.values(byId));
    return rows;
  }
  const nodes = nodeFlag ? nodeFlag.split(",") : await c.listNodes();
  if (c.variant === "L") {
    for (const [node, list] of Object.entries(await c.listSubscription(nodes))) add(node, list);
  } else {
    for (const [node, byId] of Object.entries(await c.listSubscription(nodes))) add(node, Object.values(byId));
  }
  return rows;
}

/**
 * `evb sub add <topic|pattern> <url> [--id ID] [settings]`, `evb sub rm <id>`, `evb sub list [--node ip:port,…]`,
 * and a subscription's own settings (settings-commands.ts).
 */
export async function subCommand(ctx: CliContext): Promise<number> {
  const sub = ctx.arg(0, "add|rm|list|settings|pause|resume|rotate-secret");
  switch (sub) {
    case "settings":
    case "pause":
    case "resume":
    case "rotate-secret":
      return settingsCommand(ctx, sub);
    case "add": {
      const topic = ctx.arg(1, "topic|pattern");
      const url = ctx.arg(2, "url");
      const id = await subscribingClient(ctx).subscribe(topic, url, { subscriptionId: ctx.flags.id, settings: settingsFlags(ctx) });
      ctx.print({ subscriptionId: id }, () => id);
      return EXIT.OK;
    }
    case "rm": {
      const id = ctx.arg(1, "subscriptionId");
      await subscribingClient(ctx).unSubscribe(id);
      ctx.print({ subscriptionId: id, removed: true }, () => `removed ${id}`);
      return EXIT.OK;
    }
    case "list": {
      const rows = await listAll(ctx.client, ctx.flags.node);
      ctx.print(
        rows.map((r) => ({ node: r.node, ...r.record })),
        () =>
          table(
            rows.map(({ node, record: s }) => ({
              id: s.subscribeId,
              topic: s.topicName,
              notified: s.notifiedEventCount,
              waiting: s.notifyingEventCount,
              lastNotify: s.notifyTimeStamp,
              node,
            })),
          ),
      );
      return EXIT.OK;
    }
    default:
      throw new UsageError(`unknown sub command "${sub}": add, rm or list`);
  }
}
