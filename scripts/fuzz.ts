/**
 * `npm run fuzz -- --cases N [--seed S]`: the fuzz suites (test/fuzz/: hostile HTTP requests,
 * HTTP framing, STOMP frames over WebSocket, MQTT packets over TCP and WebSocket) with more cases
 * than `npm test` runs (FUZZ_CASES, default 500 there; the framing, STOMP and MQTT suites run a
 * share of it). `--seed` replays a reported run: a failure prints its seed, its shrink path and
 * the raw request, frames or packet bytes that broke the property.
 * Uses KAFKA_BROKERS when set; otherwise the test setup starts its own Kafka.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values: args } = parseArgs({
  options: {
    cases: { type: "string" },
    seed: { type: "string" },
  },
});

const cases = args.cases ?? process.env.FUZZ_CASES ?? "2000";
if (!/^\d+$/.test(cases) || Number(cases) < 1) {
  console.error(`--cases must be a positive whole number of requests, got "${cases}"`);
  process.exit(2);
}
if (args.seed !== undefined && !/^-?\d+$/.test(args.seed)) {
  console.error(`--seed must be the integer a failed run printed, got "${args.seed}"`);
  process.exit(2);
}

const root = join(import.meta.dirname, "..");
const result = spawnSync(join(root, "node_modules", ".bin", "vitest"), ["run", "--project", "integration", "test/fuzz/"], {
  cwd: root,
  stdio: "inherit",
  env: {
    ...process.env,
    FUZZ_CASES: cases,
    ...(args.seed === undefined ? {} : { FUZZ_SEED: args.seed }),
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --disable-warning=TimeoutNegativeWarning`.trim(),
  },
});
process.exit(result.status ?? 1);
