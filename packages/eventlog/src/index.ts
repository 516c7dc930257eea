export {
  createKafka,
  KAFKA_TIMEOUT_DEFAULTS,
  KafkaClient,
  type KafkaOptions,
  type KafkaSecurity,
  type KafkaTimeouts,
} from "./kafka-client.ts";
export { committedOffsets, ensureTopics, type PartitionOffsets, topicOffsets } from "./kafka-admin.ts";
export {
  LogBackpressureError,
  type LogWriter,
  LogWriterCore,
  type LogWriterOptions,
  type RecordHeaders,
  type ProducerAdapter,
  type ProducerFactory,
} from "./log-writer.ts";
export { createLogWriter, platformaticProducer } from "./platformatic-producer.ts";
export { type FetchedPartition, type FetchPosition, LogFetcher, type LogMessage } from "./log-fetcher.ts";
export { LogInspector } from "./log-inspector.ts";
export { ChainLogWriter } from "./chain-log.ts";
export { ChainTail } from "./chain-tail.ts";
export { type ClosableClient, ReplaceableAdmin, type ReplaceableAdminOptions } from "./replaceable-admin.ts";
export { type OffsetRange, readOffsetRanges } from "./range-reader.ts";
