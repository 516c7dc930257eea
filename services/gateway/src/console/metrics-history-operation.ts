import { parseTime } from "../events/event-search.ts";
import { resolveGroup } from "../http/group.ts";
import type { Operation } from "../http/operation.ts";
import { nonBlank } from "../http/params.ts";
import { data } from "../http/replies.ts";
import { HISTORY_KEEP_MS, type HistoryPort } from "./metrics-history.ts";

export interface MetricsHistoryDeps {
  port: Pick<HistoryPort, "read">;
  groups: ReadonlySet<string>;
  intervalMs: number;
  now: () => number;
}

/**
 * admin/metricsHistory[?groupId=G][&since=T] (an extension the console reads): the group's
 * samples of the last hour (metrics-history.ts) taken at or after `since` (epoch ms or an
 * ISO-8601 time; default an hour ago), oldest first, with this gateway's clock (`now`) so a
 * browser can place them on its own. When Redis does not answer in time the samples are empty
 * and `available` is false: the charts then start empty, as they did before the history.
 */
export function metricsHistoryOperation(deps: MetricsHistoryDeps): Operation {
  return {
    path: "admin/metricsHistory",
    kind: "admin",
    variants: ["L", "M", "E"],
    async handle(ctx) {
      const group = resolveGroup(ctx.params, deps.groups);
      const now = deps.now();
      const since = Math.max(parseTime(nonBlank(ctx.params, "since")) ?? 0, now - HISTORY_KEEP_MS);
      const samples = await deps.port.read(group, since).catch(() => null);
      return data({ intervalMs: deps.intervalMs, now, available: samples !== null, samples: samples ?? [] });
    },
  };
}
