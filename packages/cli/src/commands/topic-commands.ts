import type { CliContext } from "../cli-context.ts";
import { EXIT, UsageError } from "../exit-codes.ts";

function table(rows: Record<string, unknown>[]): string {
  if (rows.length === 0) return "(none)";
  const keys = Object.keys(rows[0] as object);
  const cells = rows.map((r) => keys.map((k) => String(r[k] ?? "-")));
  const widths = keys.map((k, i) => Math.max(k.length, ...cells.map((c) => (c[i] as string).length)));
  const line = (c: string[]) =>
    c
      .map((s, i) => s.padEnd(widths[i] as number))
      .join("  ")
      .trimEnd();
  return [line(keys), ...cells.map(line)].join("\n");
}

export { table };

/** `evb topic open|close|exist|state <topic>`, `evb topic list [--page-index N] [--page-size N]`. */
export async function topicCommand(ctx: CliContext): Promise<number> {
  const sub = ctx.arg(0, "open|close|exist|state|list");
  const c = ctx.client;
  switch (sub) {
    case "open":
    case "close": {
      const topic = ctx.arg(1, "topic");
      const r = sub === "open" ? await c.open(topic) : await c.close(topic);
      ctx.print(r, () => (sub === "open" ? `opened ${topic}` : `${topic} exists (close changes nothing)`));
      return EXIT.OK;
    }
    case "exist": {
      const topic = ctx.arg(1, "topic");
      const r = await c.exist(topic);
      ctx.print(r, () => (r ? `${topic} exists` : `${topic} does not exist`));
      return EXIT.OK;
    }
    case "state": {
      const s = await c.state(ctx.arg(1, "topic"));
      ctx.print(s, () =>
        Object.entries(s)
          .map(([k, v]) => `${k.padEnd(17)} ${v ?? "-"}`)
          .join("\n"),
      );
      return EXIT.OK;
    }
    case "list": {
      const pageIndex = ctx.int("page-index", ctx.flags["page-index"] ?? "0");
      const pageSize = ctx.int("page-size", ctx.flags["page-size"] ?? "100", 1);
      const page = await c.list({ pageIndex, pageSize });
      ctx.print(page, () => {
        const rows = page.topicInfoList.map((t) => ({
          topic: t.topicName,
          events: "sequenceNumber" in t ? t.sequenceNumber : "-",
          lastBlock: "blockNumber" in t ? t.blockNumber : "-",
          created: new Date(t.createdTimestamp).toISOString(),
        }));
        return `${table(rows)}\n(${page.topicInfoList.length} of ${page.total} topics, page ${page.pageIndex})`;
      });
      return EXIT.OK;
    }
    default:
      throw new UsageError(`unknown topic command "${sub}": open, close, exist, state or list`);
  }
}
