/** Publish load against one system (broker or baseline): closed loop with wrk, open loop with fixed-rate.ts. */
import { join } from "node:path";
import type { FixedRateResult } from "./callbacks.ts";
import type { FixedRateSettings } from "./fixed-rate.ts";
import { runJsonHelper } from "./helper-process.ts";
import { CONTENT_BYTES, TOPICS } from "./plan.ts";
import { type LoadResult, mergeLoadResults, runWrk } from "./wrk-runner.ts";

export const PUBLISH_PATH = "/event-broker/rest/publish";
const BATCH_PATH = "/event-broker/rest/publishBatch";

/**
 * `connections` wrk connections spread over the origins (one wrk per origin that gets any), each
 * publishing to topics `<prefix>0..15`; SUCCESS answers go to `<dir>/<tag>-<i>.acks` when `dir` is given.
 * With `batch`, each request is a rest/publishBatch of that many events (the result counts events).
 */
export async function closedLoop(
  origins: string[],
  connections: number,
  seconds: number,
  topicPrefix: string,
  ackDir?: string,
  tag = "",
  batch?: number,
): Promise<{ result: LoadResult; ackFiles: string[] }> {
  const path = batch === undefined ? PUBLISH_PATH : BATCH_PATH;
  const used = origins.slice(0, Math.min(origins.length, connections));
  const ackFiles: string[] = [];
  const parts = await Promise.all(
    used.map((origin, i) => {
      const share = Math.floor(connections / used.length) + (i < connections % used.length ? 1 : 0);
      const env: Record<string, string> = {
        BENCH_MODE: batch === undefined ? "publish" : "batch",
        BENCH_PATH: path,
        ...(batch === undefined ? {} : { BENCH_BATCH: String(batch) }),
        BENCH_TOPIC_PREFIX: topicPrefix,
        BENCH_TOPICS: String(TOPICS),
        BENCH_CONTENT_BYTES: String(CONTENT_BYTES),
      };
      if (ackDir) {
        env.BENCH_OUT = join(ackDir, `${tag}-${i}.acks`);
        ackFiles.push(env.BENCH_OUT);
      }
      return runWrk({ url: `${origin}${path}`, connections: share, seconds, env });
    }),
  );
  return { result: mergeLoadResults(parts), ackFiles };
}

/** Publishes at `rate` per second for `seconds`, alternating over the origins. */
export function openLoop(
  origins: string[],
  rate: number,
  seconds: number,
  topicPrefix: string,
  ackFile?: string,
): Promise<FixedRateResult> {
  const settings: FixedRateSettings = {
    targets: origins.map((o) => new URL(o).host),
    path: PUBLISH_PATH,
    rate,
    seconds,
    topicPrefix,
    topics: TOPICS,
    contentBytes: CONTENT_BYTES,
    // Enough connections that a rate is kept up while answers take up to ~0.25 s.
    maxConnections: Math.max(16, Math.ceil(rate / 4 / origins.length)),
    ...(ackFile ? { out: ackFile } : {}),
  };
  return runJsonHelper<FixedRateResult>("fixed-rate.ts", settings);
}

/** Opens the 16 topics `<prefix>0..15` on the L mount. */
export async function openTopics(origin: string, prefix: string): Promise<void> {
  for (let i = 0; i < TOPICS; i++) {
    const r = await fetch(`${origin}/event-broker/rest/open?topic=${encodeURIComponent(`${prefix}${i}`)}`);
    const body = (await r.json()) as { code?: number };
    if (body.code !== 0) throw new Error(`open ${prefix}${i} failed: ${JSON.stringify(body)}`);
  }
}
