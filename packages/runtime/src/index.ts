export { openPostgres, openRedis, prepareStorage, type RedisUse } from "./adapters.ts";
export { type HealthServer, serveHealth } from "./health-server.ts";
export { runService } from "./run-service.ts";
