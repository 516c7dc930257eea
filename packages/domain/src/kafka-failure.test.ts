import { describe, expect, it } from "vitest";
import { ServiceError } from "./failures.ts";
import { certainlyNotWritten, classifyKafkaFailure, isRetriableKafkaFailure } from "./kafka-failure.ts";

// Shaped as @platformatic/kafka builds them: a broker's answer is a ProtocolError with `apiId`
// and `canRetry`; an answer with errors is a ResponseError (an AggregateError of them); a request
// retried is a MultipleErrors of its attempts; a network failure is a NetworkError with a `cause`.
const answer = (apiId: string, canRetry = false) => Object.assign(new Error(`broker said ${apiId}`), { apiId, canRetry });
const several = (message: string, errors: Error[]) => Object.assign(new AggregateError(errors, message), { canRetry: undefined });
const network = () =>
  Object.assign(new Error("Connection to 127.0.0.1:9092 failed."), { canRetry: true, cause: new Error("connect ECONNREFUSED") });
const timedOut = () => Object.assign(new Error("Request timed out"), { canRetry: true });

describe("classifyKafkaFailure", () => {
  it.each([
    {
      name: "a ServiceError keeps its kind",
      err: new ServiceError("LOG_BACKPRESSURE", "full"),
      want: "LOG_BACKPRESSURE",
      notWritten: true,
    },
    { name: "record too large", err: several("Producing messages failed.", [answer("MESSAGE_TOO_LARGE")]), want: "LOG_REFUSED" },
    { name: "batch too large", err: answer("RECORD_LIST_TOO_LARGE"), want: "LOG_REFUSED" },
    { name: "invalid record", err: answer("INVALID_RECORD"), want: "LOG_REFUSED" },
    {
      name: "no such topic, every attempt",
      err: several(
        "produce failed 3 times.",
        [1, 2, 3].map(() => answer("UNKNOWN_TOPIC_OR_PARTITION", true)),
      ),
      want: "LOG_REFUSED",
    },
    { name: "not allowed", err: answer("TOPIC_AUTHORIZATION_FAILED"), want: "LOG_REFUSED" },
    {
      name: "a wrapper whose cause is a refusal",
      err: new Error("Kafka send failed", { cause: several("x", [answer("MESSAGE_TOO_LARGE")]) }),
      want: "LOG_REFUSED",
    },
    {
      name: "a refusal after an attempt that timed out (that one may have been written)",
      err: several("produce failed 2 times.", [timedOut(), answer("UNKNOWN_TOPIC_OR_PARTITION", true)]),
      want: "LOG_UNCERTAIN",
    },
    { name: "request timed out at the broker", err: answer("REQUEST_TIMED_OUT", true), want: "LOG_UNCERTAIN" },
    { name: "not the leader", err: answer("NOT_LEADER_OR_FOLLOWER", true), want: "LOG_UNCERTAIN" },
    { name: "connection lost", err: network(), want: "LOG_UNCERTAIN" },
    { name: "the client's own timeout", err: timedOut(), want: "LOG_UNCERTAIN" },
    { name: "text naming a refusal is not an answer", err: new Error("MESSAGE_TOO_LARGE"), want: "LOG_UNCERTAIN" },
    { name: "not an Error", err: undefined, want: "LOG_UNCERTAIN" },
    {
      name: "topics created by another service first",
      err: several("Received response with error", [answer("TOPIC_ALREADY_EXISTS"), answer("TOPIC_ALREADY_EXISTS")]),
      want: "LOG_TOPIC_EXISTS",
    },
    {
      name: "one topic there already, another refused",
      err: several("Received response with error", [answer("TOPIC_ALREADY_EXISTS"), answer("INVALID_REPLICATION_FACTOR")]),
      want: "LOG_UNCERTAIN",
    },
  ])("$name: $want", ({ err, want, notWritten }) => {
    expect(classifyKafkaFailure(err)).toBe(want);
    expect(certainlyNotWritten(err)).toBe(notWritten ?? want === "LOG_REFUSED");
  });
});

describe("isRetriableKafkaFailure", () => {
  it.each([
    { name: "coordinator still loading", err: several("x", [answer("COORDINATOR_LOAD_IN_PROGRESS", true)]), want: true },
    { name: "a dropped connection", err: network(), want: true },
    { name: "a refusal", err: answer("MESSAGE_TOO_LARGE"), want: false },
    {
      name: "retried, then refused",
      err: several("x", [answer("NOT_COORDINATOR", true), answer("GROUP_AUTHORIZATION_FAILED")]),
      want: false,
    },
    { name: "not a client error", err: new Error("boom"), want: false },
  ])("$name: $want", ({ err, want }) => {
    expect(isRetriableKafkaFailure(err)).toBe(want);
  });
});

describe("ServiceError", () => {
  it("keeps its kind and its cause", () => {
    const cause = new Error("socket closed");
    const e = new ServiceError("LEASE_LOST", "lease taken over", { cause });
    expect(e.kind).toBe("LEASE_LOST");
    expect(e.cause).toBe(cause);
  });
});
