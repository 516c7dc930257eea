import { describe, expect, it } from "vitest";
import { BlockNudge, parseHint, ReceiptMessage, WakeMessage } from "./hint-messages.ts";

describe("hint messages", () => {
  it.each([
    { name: "a nudge", schema: BlockNudge, message: '{"groupId":"1","height":7}', want: { groupId: "1", height: 7 } },
    { name: "a nudge with a numeric group", schema: BlockNudge, message: '{"groupId":1,"height":7}', want: null },
    { name: "a nudge without height", schema: BlockNudge, message: '{"groupId":"1"}', want: null },
    { name: "not JSON", schema: BlockNudge, message: "{groupId", want: null },
    { name: "a wake", schema: WakeMessage, message: '["a","b"]', want: ["a", "b"] },
    { name: "a wake of numbers", schema: WakeMessage, message: "[1,2]", want: null },
    { name: "a wake that is one id", schema: WakeMessage, message: '"a"', want: null },
    { name: "a receipt list (entries checked later)", schema: ReceiptMessage, message: '[{"x":1}]', want: [{ x: 1 }] },
    {
      name: "a single receipt",
      schema: ReceiptMessage,
      message: '{"requestId":"r","eventId":"e","height":2}',
      want: { requestId: "r", eventId: "e", height: 2 },
    },
    { name: "a receipt that is a number", schema: ReceiptMessage, message: "5", want: null },
  ])("$name", ({ schema, message, want }) => {
    expect(parseHint(schema as never, message)).toEqual(want);
  });
});
