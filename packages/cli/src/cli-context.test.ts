import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { CliContext } from "./cli-context.ts";
import { parseHeaderText } from "./commands/verify-command.ts";
import { UsageError } from "./exit-codes.ts";

const io = { stdout: new PassThrough(), stderr: new PassThrough(), stdin: new PassThrough() };

describe("CliContext", () => {
  it("appends the variant's context path to a bare origin and keeps a URL that has a path", () => {
    expect(new CliContext(["--url", "http://h:1"], io, {}).baseUrl()).toBe("http://h:1/event-m");
    expect(new CliContext(["--variant", "l"], io, {}).baseUrl()).toBe("http://127.0.0.1:8080/event-broker");
    expect(new CliContext(["--variant", "E", "--url", "http://h/event/"], io, {}).baseUrl()).toBe("http://h/event");
    expect(new CliContext([], io, { EVB_URL: "http://e:2", EVB_VARIANT: "E" }).baseUrl()).toBe("http://e:2/event-e");
  });
  it("refuses an unknown variant, flag or URL as a usage error", () => {
    expect(() => new CliContext(["--variant", "X"], io, {})).toThrow(UsageError);
    expect(() => new CliContext(["--nope"], io, {})).toThrow(UsageError);
    expect(() => new CliContext(["--url", "not a url"], io, {}).baseUrl()).toThrow(UsageError);
  });
});

describe("parseHeaderText", () => {
  it("reads name: value lines (any case, CRLF) and JSON objects", () => {
    expect(parseHeaderText("Webhook-Id: msg_1\r\nwebhook-signature: v1,a b\n")).toEqual({
      "webhook-id": "msg_1",
      "webhook-signature": "v1,a b",
    });
    expect(parseHeaderText('{"webhook-id":"x"}')).toEqual({ "webhook-id": "x" });
  });
});
