export { boolVar, ConfigError, groupsVar, hostPortListVar, intVar, parseEnv, parsedVar, urlVar } from "./env.ts";
export { groupIdsFromEnv, type SharedConfig, sharedEnv } from "./shared.ts";
export { closeOnSignal, createServiceLogger, exitOnStartFailure } from "./runtime.ts";
export { currentRequestId, withRequestId } from "./request-context.ts";
export { redactUrl } from "./redact-url.ts";
