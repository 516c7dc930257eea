export {
  createKafka,
  ensureTopics,
  EventLogWriter,
  type EventLogWriterOptions,
  type KafkaLogOptions,
  LogBackpressureError,
} from "./kafka-log.ts";
