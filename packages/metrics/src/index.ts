export { DURATION_BUCKETS, LATENCY_BUCKETS, METRIC_PREFIX, ServiceMetrics, statusClass } from "./metrics-registry.ts";
export { startPoller, type Poller } from "./poller.ts";
