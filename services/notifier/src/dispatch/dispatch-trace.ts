import { addLinks, endSpan, startSpan, tracingOn } from "@evb/telemetry";
import type { DispatchResult } from "./ledger-dispatch.ts";

/**
 * One dispatch run under a `dispatch <group>` span that links to the traces of the events it
 * matched, and a `dispatch event` span in each such trace (from the run's start to its end), so
 * a publish's trace shows when its event reached the backlogs. With tracing off: `run()` alone.
 */
export async function tracedDispatch(
  groupId: string,
  run: () => Promise<DispatchResult | null>,
  now: () => number = Date.now,
): Promise<DispatchResult | null> {
  if (!tracingOn()) return run();
  const started = now();
  const span = startSpan(`dispatch ${groupId}`, { attributes: { "evb.group": groupId } });
  let result: DispatchResult | null;
  try {
    result = await run();
  } catch (err) {
    endSpan(span, err);
    throw err;
  }
  const traced = result?.traceparents ?? [];
  for (const parent of traced) {
    endSpan(startSpan("dispatch event", { parent, startTime: started, attributes: { "evb.group": groupId } }));
  }
  if (result) span?.setAttributes({ "evb.events": result.events, "evb.rows": result.rows });
  addLinks(span, traced);
  endSpan(span);
  return result;
}
