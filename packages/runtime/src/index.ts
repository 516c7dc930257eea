export { metadataAdmin, openKafka, openPostgres, openRedis, prepareStorage, type RedisUse } from "./adapters.ts";
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
export { runService } from "./run-service.ts";
