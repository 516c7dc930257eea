export { boolVar, ConfigError, groupsVar, hostPortListVar, intVar, parseEnv, parsedVar, urlVar } from "./env.ts";
export { groupIdsFromEnv, type SharedConfig, sharedEnv } from "./shared.ts";
export { redactUrl } from "./redact-url.ts";
export { podIpVar, podNameVar, SEALER_INDEX_MAX, withDerivedIdentity } from "./instance-identity.ts";
