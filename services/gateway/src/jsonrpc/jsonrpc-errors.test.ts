import { describe, expect, it } from "vitest";
import { BrokerError, NEUTRAL_SPELLING, Spelling } from "@evb/domain";
import { batchHttpStatus, brokerRpcError, httpStatusOf, rpcError } from "./jsonrpc-errors.ts";

describe("JSON-RPC errors", () => {
  it("a broker error carries its code and message, and data with the class every release's client reads", () => {
    expect(brokerRpcError(BrokerError.of("TOPIC_NOT_EXIST"), new Spelling("weevent"))).toEqual({
      code: 100101,
      message: "topic not exist",
      data: { exceptionTypeName: "com.webank.weevent.sdk.BrokerException", message: "topic not exist" },
    });
    const generic = brokerRpcError(new BrokerError(200000, null), NEUTRAL_SPELLING);
    expect(generic.message).toBe("broker error 200000");
    expect(generic.data).toEqual({ exceptionTypeName: "com.webank.event.sdk.BrokerException", message: "broker error 200000" });
  });

  it("answers the HTTP status the original's library chose per code", () => {
    const statuses = [-32700, -32600, -32601, -32602, -32603, -32001, -32099, 100101, 200203, -1, 0].map((code) =>
      httpStatusOf({ code, message: "m" }),
    );
    expect(statuses).toEqual([400, 400, 404, 500, 500, 500, 500, 200, 200, 200, 200]);
    expect(httpStatusOf(undefined)).toBe(200);
    expect(httpStatusOf(rpcError("FORBIDDEN"))).toBe(403);
    expect(httpStatusOf(rpcError("RATE_LIMITED"))).toBe(429);
    expect(batchHttpStatus([undefined, undefined])).toBe(200);
    expect(batchHttpStatus([undefined, { code: 100101, message: "topic not exist" }])).toBe(500);
  });

  it("puts what was wrong after the library's text", () => {
    expect(rpcError("INVALID_PARAMS", "content: not Base64")).toEqual({
      code: -32602,
      message: "method parameters invalid: content: not Base64",
    });
    expect(rpcError("RATE_LIMITED", undefined, { retryAfterMs: 5 })).toMatchObject({ code: -32029, data: { retryAfterMs: 5 } });
  });
});
