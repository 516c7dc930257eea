import fc from "fast-check";
import type { Seeds } from "./value-arbitraries.ts";

/** What the server answers one frame with: a reply frame, either of two, or nothing (a heart-beat). */
export type StompAnswer = "CONNECTED" | "RECEIPT" | "ERROR" | "RECEIPT|ERROR" | "none";

/** One frame of a case, built around the id it is given (its `receipt` or `id` header). */
export interface StompPiece {
  note: string;
  build: (id: string) => string | Buffer;
  answer: StompAnswer;
  /** The reply carries `receipt-id` = the id. */
  echoesId: boolean;
  /** The frame is malformed only at the end of a message (no NUL, a body cut short): nothing may follow it there. */
  endsMessage?: boolean;
}

/** STOMP_MAX_FRAME_BYTES of the suites (the default). */
export const MAX_FRAME_BYTES = 65_536;
/** A topic nobody opens. */
export const MISSING_TOPIC = "fz.never.opened";

const frame = (command: string, headers: string[], body = "") => `${command}\n${headers.map((h) => `${h}\n`).join("")}\n${body}\u0000`;

/** Header lines any frame may carry besides its own: escaped, repeated, unknown, empty. */
const noise = fc.array(
  fc.constantFrom("x-a:1", "x-a:2", "x\\c\\n:\\r\\\\", "event-format:a\\cb", "content-type:text/plain", "empty:", ":nameless", "ü:ç"),
  { maxLength: 3 },
);

function piece(note: string, answer: StompAnswer, echoesId: boolean, build: (id: string) => string | Buffer): StompPiece {
  return { note, answer, echoesId, build };
}

/** Frames the server answers and goes on: errors of its own (100101, 100103, …) keep the connection. */
export function answeredPiece(seeds: Seeds): fc.Arbitrary<StompPiece> {
  const T = seeds.topic;
  const beat = fc.constantFrom("0,0", "", "x,y", "10000,0", "-1,5", "0,99999999999", "5,5");
  return fc.oneof(
    fc
      .tuple(beat, noise)
      .map(([hb, n]) =>
        piece(`CONNECT heart-beat:${hb}`, "CONNECTED", false, () => frame("CONNECT", ["accept-version:1.1,1.2", `heart-beat:${hb}`, ...n])),
      ),
    noise.map((n) =>
      piece("SEND to a missing topic", "ERROR", true, (id) => frame("SEND", [`destination:${MISSING_TOPIC}`, `receipt:${id}`, ...n], "x")),
    ),
    fc.constant(piece("SEND without destination", "ERROR", true, (id) => frame("SEND", [`receipt:${id}`], "x"))),
    fc.constant(piece("SEND with an empty body", "ERROR", true, (id) => frame("SEND", [`destination:${T}`, `receipt:${id}`]))),
    fc.constant(
      piece("SEND of 10,241 chars", "ERROR", true, (id) => frame("SEND", [`destination:${T}`, `receipt:${id}`], "c".repeat(10_241))),
    ),
    fc.constant(
      piece("SEND to group 100", "ERROR", true, (id) => frame("SEND", [`destination:${T}`, "groupId:100", `receipt:${id}`], "x")),
    ),
    fc
      .tuple(
        fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !s.includes("\u0000")),
        noise,
      )
      .map(([body, n]) =>
        piece("SEND", "RECEIPT|ERROR", true, (id) =>
          frame("SEND", [`destination:${T}`, `receipt:${id}`, `content-length:${Buffer.byteLength(body)}`, ...n], body),
        ),
      ),
    fc.constant(
      piece("SUBSCRIBE a missing topic", "ERROR", true, (id) => frame("SUBSCRIBE", [`destination:${MISSING_TOPIC}`, `id:${id}`])),
    ),
    fc.constant(
      piece("SUBSCRIBE OFFSET_LAST", "RECEIPT", true, (id) => frame("SUBSCRIBE", [`destination:${T}`, "eventId:OFFSET_LAST", `id:${id}`])),
    ),
    fc.constant(piece("SUBSCRIBE a+/b", "ERROR", true, (id) => frame("SUBSCRIBE", ["destination:a+/b", `id:${id}`]))),
    fc
      .constantFrom("abc", "0", "-1", "99999999999999999999", "OFFSET_", "")
      // An empty eventId is the default start (OFFSET_LAST): answered, not refused.
      .map((e) =>
        piece(`SUBSCRIBE eventId:${e}`, e === "" ? "RECEIPT" : "ERROR", true, (id) =>
          frame("SUBSCRIBE", [`destination:${T}`, `eventId:${e}`, `id:${id}`]),
        ),
      ),
    fc.constant(piece("UNSUBSCRIBE an unknown id", "ERROR", true, (id) => frame("UNSUBSCRIBE", [`id:${id}`]))),
    fc.constantFrom("\n", "\r\n", "\n\n\n").map((eol) => piece("heart-beat", "none", false, () => eol)),
  );
}

const unsupported = fc
  .constantFrom("STOMP", "ACK", "NACK", "BEGIN", "COMMIT", "ABORT")
  .map((c) => piece(`${c} (not supported)`, "ERROR", true, (id) => frame(c, [`id:${id}`])));

/** Frames that are malformed wherever they stand in a message. */
const malformedAnywhere: fc.Arbitrary<StompPiece> = fc.oneof(
  fc
    .constantFrom("send", "CONNECTED", "MESSAGE", "RECEIPT", "FOO", "SEND ", " SEND", "\u0001", "SEND\u0000")
    .map((c) => piece(`unknown command ${JSON.stringify(c)}`, "ERROR", false, () => frame(c, ["destination:x"]))),
  fc
    .constantFrom("\\t", "\\", "\\x", "\\C", "\\\\\\")
    .map((e) => piece(`bad escape ${e}`, "ERROR", false, () => frame("SEND", [`destination:a${e}`], "x"))),
  fc.constant(piece("header line without a colon", "ERROR", false, () => frame("SEND", ["destination"], "x"))),
  fc.constant(piece("bare CR in a header", "ERROR", false, () => frame("SEND", ["destination:a\rb"], "x"))),
  fc.integer({ min: 257, max: 3_000 }).map((n) =>
    piece(`${n} headers`, "ERROR", false, () =>
      frame(
        "CONNECT",
        Array.from({ length: n }, (_, i) => `h${i}:v`),
      ),
    ),
  ),
  fc
    .constantFrom("abc", "-1", "1e3", "0x10", "9999999999", " ", "")
    .map((l) => piece(`content-length:${l}`, "ERROR", false, () => frame("SEND", ["destination:x", `content-length:${l}`], "x"))),
  fc.constant(
    piece("body longer than content-length", "ERROR", false, () => frame("SEND", ["destination:x", "content-length:2"], "hello")),
  ),
  // Any text (a text message must be UTF-8, else the close is 1007) after a byte no command starts with.
  fc
    .string({ unit: "binary", minLength: 1, maxLength: 200 })
    .map((s) => piece("garbage", "ERROR", false, () => Buffer.from(`\u0001${s}`, "utf8"))),
);

/** Frames malformed because their message ends inside them. */
const cutShort: fc.Arbitrary<StompPiece> = fc
  .constantFrom(
    ["no NUL", "SEND\ndestination:x\n\nbody"],
    ["no blank line", "SEND\ndestination:x\n"],
    ["command only", "SEND"],
    ["content-length past the end", "SEND\ndestination:x\ncontent-length:500\n\nhi\u0000"],
  )
  .map(([note, text]) => ({ ...piece(`cut short: ${note}`, "ERROR", false, () => text), endsMessage: true }));

/** A frame the server answers with ERROR and then closes (1002). */
export const refusedPiece: fc.Arbitrary<StompPiece> = fc.oneof(unsupported, malformedAnywhere, cutShort);

/** A frame no command starts with, for the cases that end on one whatever the seed. */
export const GARBAGE: StompPiece = piece("garbage", "ERROR", false, () => "\u0001garbage\n\n\u0000");
