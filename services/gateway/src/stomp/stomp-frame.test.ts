import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type DecodedMessage,
  encodeFrame,
  escapeHeader,
  header,
  MAX_HEADERS_PER_FRAME,
  readFrames,
  unescapeHeader,
} from "./stomp-frame.ts";

/** Every frame of one WebSocket text message (readFrames without a bound). */
function decodeFrames(buf: Buffer): DecodedMessage {
  const { frames, error } = readFrames(buf, 0, Number.POSITIVE_INFINITY);
  return error === undefined ? { frames } : { frames, error };
}

const buf = (s: string) => Buffer.from(s, "utf8");

describe("decodeFrames", () => {
  it("reads several frames of one message in order, skipping EOL heart-beats between them", () => {
    const { frames, error } = decodeFrames(buf("\n\r\nCONNECT\naccept-version:1.1\n\n\u0000\nSEND\ndestination:t\n\nhello\u0000\n"));
    expect(error).toBeUndefined();
    expect(frames).toEqual([
      { command: "CONNECT", headers: [["accept-version", "1.1"]], body: "" },
      { command: "SEND", headers: [["destination", "t"]], body: "hello" },
    ]);
  });

  it("reads CRLF line ends", () => {
    expect(decodeFrames(buf("SEND\r\ndestination:t\r\n\r\nx\u0000")).frames).toEqual([
      { command: "SEND", headers: [["destination", "t"]], body: "x" },
    ]);
  });

  it("an EOL-only message is a heart-beat: no frame, no error", () => {
    expect(decodeFrames(buf("\n"))).toEqual({ frames: [] });
    expect(decodeFrames(buf("\r\n\n"))).toEqual({ frames: [] });
  });

  it("takes content-length bytes as the body, NULs and multi-byte characters included", () => {
    const body = "a\u0000é中";
    const text = `SEND\ncontent-length:${Buffer.byteLength(body)}\n\n${body}\u0000SEND\n\nnext\u0000`;
    const { frames } = decodeFrames(buf(text));
    expect(frames.map((f) => f.body)).toEqual([body, "next"]);
  });

  it("unescapes header names and values in every frame, CONNECT included; keeps repeats, the first one wins", () => {
    const { frames } = decodeFrames(buf("CONNECT\npass\\ccode:a\\cb\\nc\\\\d\\re\nx:1\nx:2\n\n\u0000"));
    const f = frames[0];
    expect(f?.headers).toEqual([
      ["pass:code", "a:b\nc\\d\re"],
      ["x", "1"],
      ["x", "2"],
    ]);
    expect(f && header(f, "x")).toBe("1");
  });

  it.each([
    ["an unknown command", "HELLO\n\n\u0000", /unknown command: HELLO/],
    ["a lower-case command", "send\n\n\u0000", /unknown command/],
    ["an undefined escape", "SEND\nd:a\\tb\n\n\u0000", /undefined escape/],
    ["a trailing backslash", "SEND\nd:a\\\n\n\u0000", /undefined escape/],
    ["a bare CR", "SEND\nd:a\rb\n\n\u0000", /bare CR/],
    ["a header line without a colon", "SEND\nnocolon\n\n\u0000", /without a colon/],
    ["a missing NUL", "SEND\nd:x\n\nbody", /not terminated by NUL/],
    ["headers cut off", "SEND\nd:x", /inside its headers/],
    ["a content-length past the data", "SEND\ncontent-length:10\n\nabc\u0000", /not followed by NUL/],
    ["a content-length that is no number", "SEND\ncontent-length:-1\n\nabc\u0000", /not a byte count/],
    ["a command line without EOL", "SEND", /without a command line/],
  ])("stops at %s with an error, keeping the frames before it", (_what, bad, message) => {
    const { frames, error } = decodeFrames(buf(`SEND\n\nok\u0000${bad}`));
    expect(frames).toHaveLength(1);
    expect(error).toMatch(message);
  });

  it(`refuses more than ${MAX_HEADERS_PER_FRAME} headers in one frame`, () => {
    const many = Array.from({ length: MAX_HEADERS_PER_FRAME + 1 }, (_, i) => `h${i}:v\n`).join("");
    expect(decodeFrames(buf(`SEND\n${many}\n\u0000`)).error).toMatch(/more than 256 headers/);
  });

  it("reads a large message in linear time (20,000 frames)", () => {
    const text = "SEND\ndestination:t\n\nx\u0000".repeat(20_000);
    const t0 = performance.now();
    expect(decodeFrames(buf(text)).frames).toHaveLength(20_000);
    expect(performance.now() - t0).toBeLessThan(2_000);
  });
});

describe("encodeFrame", () => {
  it("escapes headers of every frame but CONNECTED", () => {
    expect(encodeFrame("MESSAGE", [["k:1", "a:b\nc\\d\re"]], "body")).toBe("MESSAGE\nk\\c1:a\\cb\\nc\\\\d\\re\n\nbody\u0000");
    expect(encodeFrame("CONNECTED", [["heart-beat", "0,30000"]])).toBe("CONNECTED\nheart-beat:0,30000\n\n\u0000");
  });

  it("round-trips any header name, value and body through the decoder", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.string({ minLength: 1 }), fc.string()), { maxLength: 8 }),
        fc.string().filter((s) => !s.includes("\u0000")),
        (headers, body) => {
          const { frames, error } = decodeFrames(buf(encodeFrame("SEND", headers, body)));
          expect(error).toBeUndefined();
          expect(frames).toEqual([{ command: "SEND", headers, body }]);
        },
      ),
    );
  });

  it("escapeHeader and unescapeHeader are inverses; an undefined escape is null", () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        expect(unescapeHeader(escapeHeader(s))).toBe(s);
      }),
    );
    expect(unescapeHeader("a\\x")).toBeNull();
  });
});
