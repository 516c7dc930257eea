import { describe, expect, it } from "vitest";
import { readReply } from "./reply.ts";

describe("readReply", () => {
  it("unwraps the success envelope", () => {
    expect(readReply({ code: 0, message: "success", data: false })).toEqual({ ok: true, data: false });
  });
  it("reads L's error object with data null", () => {
    expect(readReply({ code: 100101, message: "topic not exist", data: null })).toEqual({
      ok: false,
      code: 100101,
      message: "topic not exist",
    });
  });
  it("reads the bare error object of M and E, and a null message of a generic code", () => {
    expect(readReply({ code: -1, message: "pageIndex error." })).toEqual({ ok: false, code: -1, message: "pageIndex error." });
    expect(readReply({ code: 200000, message: null, data: null })).toEqual({ ok: false, code: 200000, message: null });
  });
  it("takes bare successes as they are", () => {
    expect(readReply(true)).toEqual({ ok: true, data: true });
    expect(readReply({ status: "SUCCESS", topic: "t", eventId: "x" })).toEqual({
      ok: true,
      data: { status: "SUCCESS", topic: "t", eventId: "x" },
    });
    expect(readReply(["1"])).toEqual({ ok: true, data: ["1"] });
  });
});
