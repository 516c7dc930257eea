export {
  createKafka,
  ensureTopics,
  EventLogWriter,
  type EventLogWriterOptions,
  type KafkaLogOptions,
  LogBackpressureError,
} from "./kafka-log.ts";
export { createLogWriter, type KafkaClientName, type LogWriter } from "./log-writer.ts";
export { PlatformaticLogWriter } from "./platformatic-log.ts";
export { LogInspector, type PartitionOffsets } from "./log-inspector.ts";
export { ChainLogWriter } from "./chain-log.ts";
export { type OffsetRange, readOffsetRanges } from "./range-reader.ts";
