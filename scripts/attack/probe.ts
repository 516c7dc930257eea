/**
 * The gateway's side of the measurement: its event-loop delay from /metrics and whether it is
 * alive. prom-client computes `nodejs_eventloop_lag_max_seconds` from a monitorEventLoopDelay
 * histogram that it resets on every collect (node_modules/prom-client/lib/metrics/eventLoopLag.js),
 * so one scrape opens a window and the next reads the largest delay since: scrape, run the
 * shape, scrape. Anything else scraping the same gateway meanwhile would shorten the window.
 */
import { rawCall } from "../../test/support/raw-http.ts";
import { Scrape } from "../../test/support/scrape.ts";

const LOOP_MAX_METRIC = "evb_nodejs_eventloop_lag_max_seconds";
const START_METRIC = "evb_process_start_time_seconds";

/** After a shape, before the closing scrape: lets a delay the shape caused end and be recorded. */
export const SETTLE_MS = 100;

export interface LoopReading {
  /** Largest event-loop delay since the previous scrape, ms. */
  loopMaxMs: number;
  /** When the gateway process started (s since the epoch): a change means it died and came back. */
  processStart: number | undefined;
}

/** Reads the loop delay and the process start time from a /metrics text. */
export function readLoop(metricsText: string): LoopReading {
  const s = new Scrape(metricsText);
  const max = s.value(LOOP_MAX_METRIC);
  if (max === undefined || !Number.isFinite(max)) {
    throw new Error(
      `/metrics has no ${LOOP_MAX_METRIC}: is --url a gateway of this broker (its metrics carry the evb_ prefix and Node's default metrics)?`,
    );
  }
  return { loopMaxMs: max * 1000, processStart: s.value(START_METRIC) };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A failure's short form: its code (ECONNREFUSED …) and message. */
export function describeError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const code = e?.code && !String(e.message).includes(e.code) ? `${e.code}: ` : "";
  return `${code}${e?.message ?? String(err)}`;
}

/** One scrape, tried a few times: a gateway being restarted refuses connections for a moment. */
export async function scrapeLoop(url: string, tries = 3): Promise<LoopReading> {
  for (let attempt = 1; ; attempt++) {
    try {
      return readLoop((await Scrape.of(url)).text);
    } catch (err) {
      if (attempt >= tries || /has no evb_/.test(String(err))) throw err;
      await sleep(200 * attempt);
    }
  }
}

/** `GET /livez` once: undefined when it answers 200, else what happened. */
export async function livezProblem(url: string, timeoutMs: number): Promise<string | undefined> {
  try {
    const r = await rawCall(url, { path: "/livez", timeoutMs });
    return r.status === 200 ? undefined : `GET /livez answered ${r.status} ${r.text.slice(0, 200)}`;
  } catch (err) {
    return `GET /livez failed: ${describeError(err)}`;
  }
}

/** The gateway stopped answering for longer than the run waits for it. */
export class GatewayGone extends Error {}

/**
 * Waits until /livez answers 200, for at most `boundMs`: the gateway may be restarting (a
 * supervisor bringing it back after a crash, or someone restarting it while they work).
 */
export async function waitAlive(url: string, boundMs: number, say: (line: string) => void): Promise<void> {
  const deadline = Date.now() + boundMs;
  let told = false;
  for (;;) {
    const problem = await livezProblem(url, 5_000);
    if (problem === undefined) return;
    if (Date.now() >= deadline) {
      throw new GatewayGone(
        `nothing answers at ${url} (${problem}) after ${Math.round(boundMs / 1000)} s: start the stack with \`npm start\`, or pass --url of a running gateway`,
      );
    }
    if (!told) say(`  waiting up to ${Math.round(boundMs / 1000)} s for the gateway at ${url} to answer (${problem})`);
    told = true;
    await sleep(250);
  }
}

/** One idle window of `ms`: the largest loop delay while nothing of ours was in flight. */
export async function idleWindow(url: string, ms: number): Promise<number> {
  await scrapeLoop(url);
  await sleep(ms + SETTLE_MS);
  return (await scrapeLoop(url)).loopMaxMs;
}
