export { boolVar, ConfigError, groupsVar, hostPortListVar, intVar, parseEnv, parsedVar, urlVar } from "./env.ts";
export { groupIdsFromEnv, type SharedConfig, sharedEnv } from "./shared.ts";
export { redactUrl } from "./redact-url.ts";
export { podIpVar, podNameVar, SEALER_INDEX_MAX, withDerivedIdentity } from "./instance-identity.ts";
export { KAFKA_SASL_MECHANISMS, type KafkaSecurityConfig, kafkaSecurityProblems, kafkaTlsOn } from "./kafka-security-env.ts";
export { type StorageTlsConfig, storageTlsProblems } from "./storage-tls-env.ts";
