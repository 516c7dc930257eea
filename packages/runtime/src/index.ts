export { metadataAdmin, openKafka, openPostgres, openRedis, prepareStorage, type RedisUse } from "./adapters.ts";
export { BackgroundCheck, type BackgroundCheckOptions, type Checked, NOT_CHECKED_YET } from "./background-check.ts";
export {
  answerHealth,
  HEALTH_PATHS,
  type HealthOptions,
  type HealthServer,
  type Liveness,
  type Readiness,
  type Route,
  serveHealth,
} from "./health-server.ts";
export { type KafkaState, KafkaProbe } from "./kafka-probe.ts";
export { checkReason, postgresCheck, READINESS_INTERVAL_MS, READINESS_TIMEOUT_MS, redisCheck } from "./readiness-checks.ts";
export { currentRequestId, withRequestId } from "./request-context.ts";
export { runService } from "./run-service.ts";
export { createServiceLogger } from "./service-logger.ts";
export { kafkaSecurity } from "./kafka-security.ts";
export { checkKafkaLink } from "./kafka-link.ts";
export { postgresSsl } from "./storage-tls.ts";
export { PemFileError, readPemFile } from "./pem-file.ts";
