import { describe, expect, it } from "vitest";
import { ServiceError } from "./failures.ts";
import { certainlyNotWritten, classifyKafkaFailure, triageKafkaLog } from "./kafka-failure.ts";

const typed = (type: string, message = "broker said no") => Object.assign(new Error(message), { type });
describe("classifyKafkaFailure", () => {
  it.each([
    {
      name: "a ServiceError keeps its kind",
      err: new ServiceError("LOG_BACKPRESSURE", "full"),
      want: "LOG_BACKPRESSURE",
      notWritten: true,
    },
    { name: "record too large", err: typed("MESSAGE_TOO_LARGE"), want: "LOG_REFUSED", notWritten: true },
    { name: "batch too large", err: typed("RECORD_LIST_TOO_LARGE"), want: "LOG_REFUSED", notWritten: true },
    { name: "invalid record", err: typed("INVALID_RECORD"), want: "LOG_REFUSED", notWritten: true },
    { name: "no such topic", err: typed("UNKNOWN_TOPIC_OR_PARTITION"), want: "LOG_REFUSED", notWritten: true },
    { name: "not allowed", err: typed("TOPIC_AUTHORIZATION_FAILED"), want: "LOG_REFUSED", notWritten: true },
    {
      name: "a retry wrapper naming a refusal in its text",
      err: new Error("KafkaJSNumberOfRetriesExceeded: MESSAGE_TOO_LARGE"),
      want: "LOG_REFUSED",
      notWritten: true,
    },
    { name: "request timed out", err: typed("REQUEST_TIMED_OUT"), want: "LOG_UNCERTAIN", notWritten: false },
    { name: "not the leader", err: typed("NOT_LEADER_FOR_PARTITION"), want: "LOG_UNCERTAIN", notWritten: false },
    { name: "connection lost", err: new Error("Connection error: read ECONNRESET"), want: "LOG_UNCERTAIN", notWritten: false },
    { name: "not an Error", err: undefined, want: "LOG_UNCERTAIN", notWritten: false },
    {
      name: "topic created by another service first",
      err: typed("TOPIC_ALREADY_EXISTS", "Topic with this name already exists"),
      want: "LOG_TOPIC_EXISTS",
      notWritten: false,
    },
    {
      name: "an aggregate naming an existing topic",
      err: new Error("Topic 'x' already exists."),
      want: "LOG_TOPIC_EXISTS",
      notWritten: false,
    },
    {
      name: "metadata lagging a new topic",
      err: new Error("This server does not host this topic-partition"),
      want: "LOG_NOT_READY",
      notWritten: false,
    },
  ])("$name: $want", ({ err, want, notWritten }) => {
    expect(classifyKafkaFailure(err)).toBe(want);
    expect(certainlyNotWritten(err)).toBe(notWritten);
  });
});

describe("ServiceError", () => {
  it("takes retryable from its kind's entry and keeps the cause", () => {
    const cause = new Error("socket closed");
    const e = new ServiceError("LEASE_LOST", "lease taken over", { cause });
    expect(e.retryable).toBe(true);
    expect(e.cause).toBe(cause);
    expect(new ServiceError("STORAGE_REJECTED", "no").retryable).toBe(false);
  });
});

describe("triageKafkaLog", () => {
  it.each([
    { message: "Limiting retries for the idempotent producer to 5", want: "noise" },
    { message: "Response Metadata", error: "This server does not host this topic-partition", want: "transient" },
    { message: "Restarting the consumer in 3000ms", want: "transient" },
    { message: "[Runner] The group is rebalancing, re-joining the group", want: "transient" },
    { message: "Crash: KafkaJSProtocolError: The group coordinator is not available", want: "transient" },
    { message: "Crash: KafkaJSNonRetriableError: Topic authorization failed", want: "as-is" },
    { message: "Connection error: ECONNREFUSED", want: "as-is" },
  ])("$message: $want", ({ message, error, want }) => {
    expect(triageKafkaLog({ message, error })).toBe(want);
  });
});
