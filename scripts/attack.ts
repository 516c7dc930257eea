/**
 * `npm run attack [-- --url http://127.0.0.1:8080] [--quick] [--strict] [--shape NAME]`: replays
 * hostile request shapes against a running gateway and prints, for each, the gateway's largest
 * event-loop delay while it ran (its /metrics) beside the largest delay of idle windows of the
 * same run. The goal: no shape more than 50 ms beyond the idle maximum. Every shape also checks
 * its answers and that the gateway is alive after it.
 *
 * Exit 0 when every answer is right; 1 on a wrong answer or a dead gateway, or with --strict
 * also on a shape over the goal; 2 on a bad command line. A latency probe of the gateway's
 * event loop, not a throughput bench (that is `npm run bench`).
 */
import { parseAttackArgs, UsageError } from "./attack/args.ts";
import { closingLine, GOAL_EXCESS_MS, renderFindings, renderTable } from "./attack/report.ts";
import { allShapes, runAttack } from "./attack/run.ts";

const known = [{ name: "idle", family: "idle" }, ...allShapes().map((s) => ({ name: s.name, family: s.family }))];
let opts: ReturnType<typeof parseAttackArgs>;
try {
  opts = parseAttackArgs(process.argv.slice(2), known);
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  console.error(err.message);
  process.exit(2);
}

console.log(
  `attack on ${opts.url}${opts.quick ? " (--quick sizes)" : ""}: the gateway's max event-loop delay per shape vs idle; goal ≤ ${GOAL_EXCESS_MS} ms beyond idle`,
);
// Ctrl-C lets the shape in flight finish and the subscriptions F10 made be removed; a second one quits at once.
const interrupt = new AbortController();
process.on("SIGINT", () => {
  if (interrupt.signal.aborted) process.exit(130);
  console.log("interrupted: stopping after this shape and removing what the run set up (Ctrl-C again to quit now)");
  interrupt.abort();
});
try {
  const { verdict } = await runAttack({ ...opts, say: (line) => console.log(line), signal: interrupt.signal });
  console.log(`\n${renderTable(verdict)}\n`);
  for (const line of renderFindings(verdict)) console.log(line);
  console.log(closingLine(verdict));
  process.exitCode = interrupt.signal.aborted ? 130 : verdict.exitCode;
} catch (err) {
  console.error(`attack: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
