import { logLevel } from "kafkajs";
import { describe, expect, it } from "vitest";
import type { Logger } from "@evb/domain";
import { kafkaLogCreator } from "./kafka-log.ts";

function recordingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (_obj: object | string, msg?: string) => lines.push(`${level} ${msg}`);
  return { logger: { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") }, lines };
}

describe("kafkaLogCreator", () => {
  it("keeps a broker's transient answers, which kafkajs retries, out of the error log", () => {
    const { logger, lines } = recordingLogger();
    const log = kafkaLogCreator(logger)();
    log({
      level: logLevel.ERROR,
      log: { message: "Response GroupCoordinator(key: 10, version: 2)", error: "The group coordinator is not available" },
    });
    log({
      level: logLevel.ERROR,
      log: { message: "Response Metadata(key: 3, version: 6)", error: "This server does not host this topic-partition" },
    });
    // A consumer crash over a transient answer, and kafkajs's notice that it restarts the consumer.
    log({
      level: logLevel.ERROR,
      log: { message: "Crash: KafkaJSProtocolError: The coordinator is loading and hence can't process requests for this group" },
    });
    log({ level: logLevel.ERROR, log: { message: "Restarting the consumer in 200ms", retryTime: 200 } });
    expect(lines).toEqual([
      "debug Response GroupCoordinator(key: 10, version: 2)",
      "debug Response Metadata(key: 3, version: 6)",
      "debug Crash: KafkaJSProtocolError: The coordinator is loading and hence can't process requests for this group",
      "debug Restarting the consumer in 200ms",
    ]);
  });

  it("still reports other errors and warnings at their level, and drops debug chatter", () => {
    const { logger, lines } = recordingLogger();
    const log = kafkaLogCreator(logger)();
    log({
      level: logLevel.ERROR,
      log: {
        message: "Response Produce(key: 0, version: 7)",
        error: "The request included a message larger than the max message size the server will accept",
      },
    });
    log({ level: logLevel.ERROR, log: { message: "Crash: KafkaJSNonRetriableError: Invalid topic" } });
    log({ level: logLevel.WARN, log: { message: "KafkaJS v2.0.0 switched default partitioner" } });
    log({ level: logLevel.INFO, log: { message: "Consumer has joined the group" } });
    expect(lines).toEqual([
      "error Response Produce(key: 0, version: 7)",
      "error Crash: KafkaJSNonRetriableError: Invalid topic",
      "warn KafkaJS v2.0.0 switched default partitioner",
    ]);
  });
});
