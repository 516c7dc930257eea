export { type CallbackTarget, isIpLiteral, MAX_CALLBACK_URL_LENGTH, parseCallbackUrl } from "./callback-url.ts";
export { type HostLookup, type ResolvedAddress, type ResolveResult, resolveCallbackHost, systemLookup } from "./resolve-callback-host.ts";
export {
  dropStats,
  readStats,
  STATS_MIRROR_TIMEOUT_MS,
  type StatsCopy,
  type StatsEntry,
  type LedgerCounters,
  newestCounters,
  statsEntry,
  writeStats,
} from "./subscription-stats.ts";
export { addressPolicy, callbackEnv } from "./callback-env.ts";
