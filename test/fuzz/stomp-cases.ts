import fc from "fast-check";
import { shown } from "./framing-socket.ts";
import { answeredPiece, GARBAGE, MAX_FRAME_BYTES, refusedPiece, type StompAnswer, type StompPiece } from "./stomp-pieces.ts";
import type { WsMessage } from "./stomp-wire.ts";
import type { Seeds } from "./value-arbitraries.ts";

/**
 * How a case ends. `refused`: a malformed or unsupported frame, answered ERROR after the replies
 * to every frame before it, then a close (1002). `disconnect`: the suite's own DISCONNECT
 * (`receipt:bye`), answered RECEIPT after every earlier reply, then a close (1000): the
 * connection stayed usable. `transport`: a message the WebSocket itself refuses (binary 1003,
 * not UTF-8 1007, above STOMP_MAX_FRAME_BYTES 1009): closed with that code, replies so far in order.
 */
export type StompEnding =
  | { kind: "refused"; piece: StompPiece }
  | { kind: "disconnect" }
  | { kind: "transport"; code: 1003 | 1007 | 1009; bytes: Buffer };

export interface OwedReply {
  answer: StompAnswer;
  /** The `receipt-id` the reply must carry; undefined: none is checked. */
  receiptId?: string;
}

export interface StompCase {
  note: string;
  messages: WsMessage[];
  /** Replies owed to the frames before the ending, in frame order. */
  owed: OwedReply[];
  ending: StompEnding;
  /** The ending's own frame and close within this many ms of connecting. */
  boundMs: number;
  /** Large enough to hold the loop: a /health beside it is timed. */
  heavy: boolean;
}

/** Hang bound of an ordinary case: far above any documented wait (a SEND waits 2 s at most here). */
export const STOMP_BOUND_MS = 10_000;
/** Room left in a message for the WebSocket's own framing. */
const MESSAGE_ROOM = MAX_FRAME_BYTES - 1_024;
const DISCONNECT = "DISCONNECT\nreceipt:bye\n\n\u0000";

/** Packs frames into text messages: a new one where `breaks` says so, or where the next frame would not fit. */
class Packer {
  readonly messages: WsMessage[] = [];
  private parts: Buffer[] = [];
  private size = 0;

  add(bytes: string | Buffer, newMessage = false): void {
    const b = typeof bytes === "string" ? Buffer.from(bytes, "utf8") : bytes;
    if (newMessage || this.size + b.length > MESSAGE_ROOM) this.flush();
    this.parts.push(b);
    this.size += b.length;
  }

  flush(): void {
    if (this.parts.length > 0) this.messages.push({ bytes: Buffer.concat(this.parts), binary: false });
    this.parts = [];
    this.size = 0;
  }

  raw(m: WsMessage): void {
    this.flush();
    this.messages.push(m);
  }
}

const transportEnding: fc.Arbitrary<StompEnding> = fc.oneof(
  fc.uint8Array({ maxLength: 200 }).map((b): StompEnding => ({ kind: "transport", code: 1003, bytes: Buffer.from(b) })),
  fc.constantFrom([0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80]).map(
    (b): StompEnding => ({
      kind: "transport",
      code: 1007,
      bytes: Buffer.concat([Buffer.from("SEND\n\n"), Buffer.from(b), Buffer.from([0])]),
    }),
  ),
  fc
    .integer({ min: 1, max: 200_000 })
    .map((over): StompEnding => ({ kind: "transport", code: 1009, bytes: Buffer.alloc(MAX_FRAME_BYTES + over, "\n") })),
);

/** Up to 12 answered frames in any grouping into messages, an ending, and frames after it that must go unanswered. */
export function stompCase(seeds: Seeds): fc.Arbitrary<StompCase> {
  const lead = fc.array(fc.record({ piece: answeredPiece(seeds), newMessage: fc.boolean() }), { maxLength: 12 });
  const ending = fc.oneof(
    { weight: 3, arbitrary: refusedPiece.map((piece): StompEnding => ({ kind: "refused", piece })) },
    { weight: 1, arbitrary: fc.constant<StompEnding>({ kind: "disconnect" }) },
    { weight: 1, arbitrary: transportEnding },
  );
  return fc
    .record({ lead, ending, endNewMessage: fc.boolean(), tail: fc.array(answeredPiece(seeds), { maxLength: 4 }) })
    .map(({ lead, ending, endNewMessage, tail }) => {
      const pack = new Packer();
      const owed: OwedReply[] = [];
      lead.forEach(({ piece, newMessage }, i) => {
        pack.add(piece.build(`r${i}`), newMessage);
        if (piece.answer !== "none") owed.push({ answer: piece.answer, receiptId: piece.echoesId ? `r${i}` : undefined });
      });
      if (ending.kind === "transport") pack.raw({ bytes: ending.bytes, binary: ending.code === 1003 });
      else pack.add(ending.kind === "disconnect" ? DISCONNECT : ending.piece.build("x"), endNewMessage);
      if (ending.kind === "refused" && ending.piece.endsMessage) pack.flush();
      tail.forEach((p, i) => {
        pack.add(p.build(`t${i}`));
      });
      pack.flush();
      const endNote = ending.kind === "refused" ? ending.piece.note : ending.kind === "disconnect" ? "DISCONNECT" : `close ${ending.code}`;
      const note = `${lead.map((l) => l.piece.note).join(", ") || "nothing"}, then ${endNote}${tail.length > 0 ? `, then ${tail.length} more` : ""}`;
      return printable({ note, messages: pack.messages, owed, ending, boundMs: STOMP_BOUND_MS, heavy: false });
    });
}

/** `c` as fast-check prints a counterexample: its note and every message's raw bytes. */
function printable(c: StompCase): StompCase {
  return Object.defineProperty(c, fc.toStringMethod, { value: () => describeStompCase(c), enumerable: false });
}

export function describeStompCase(c: StompCase): string {
  const msgs = c.messages.map(
    (m, i) => `  message ${i + 1} (${m.binary ? "binary" : "text"}, ${m.bytes.length} bytes): ${shown(m.bytes, 600)}`,
  );
  return `${c.note}\n${msgs.join("\n")}`;
}

function flood(note: string, frames: { text: string; owed?: OwedReply }[], ending: StompEnding, heavy = true): StompCase {
  const pack = new Packer();
  for (const f of frames) pack.add(f.text);
  if (ending.kind === "disconnect") pack.add(DISCONNECT);
  else if (ending.kind === "refused") pack.add(ending.piece.build("x"));
  pack.flush();
  const owed = frames.flatMap((f) => (f.owed ? [f.owed] : []));
  return printable({ note, messages: pack.messages, owed, ending, boundMs: 30_000, heavy });
}

/** The largest shapes, run first whatever the seed: floods of frames, of heart-beats, of SENDs past STOMP_MAX_PENDING_PUBLISHES. */
export function stompFloods(seeds: Seeds): StompCase[] {
  const n = (k: number) => Array.from({ length: k }, (_, i) => i);
  const T = seeds.topic;
  return [
    flood(
      "30,000 CONNECTs",
      n(30_000).map(() => ({ text: "CONNECT\n\n\u0000", owed: { answer: "CONNECTED" } })),
      { kind: "disconnect" },
    ),
    flood(
      "20,000 UNSUBSCRIBEs of unknown ids",
      n(20_000).map((i) => ({ text: `UNSUBSCRIBE\nid:u${i}\n\n\u0000`, owed: { answer: "ERROR", receiptId: `u${i}` } })),
      { kind: "disconnect" },
    ),
    flood(
      "600,000 heart-beat EOLs",
      n(20).map(() => ({ text: "\n".repeat(30_000) })),
      { kind: "disconnect" },
    ),
    flood(
      "60 SENDs in one message (past STOMP_MAX_PENDING_PUBLISHES), then garbage",
      n(60).map((i) => ({
        text: `SEND\ndestination:${T}\nreceipt:s${i}\n\nflood ${i}\u0000`,
        owed: { answer: "RECEIPT", receiptId: `s${i}` },
      })),
      { kind: "refused", piece: GARBAGE },
      false,
    ),
    flood(
      "SUBSCRIBE to a list of 6,000 missing topics",
      [
        {
          text: `SUBSCRIBE\nid:l\ndestination:${n(6_000)
            .map((i) => `m${i}`)
            .join(",")}\n\n\u0000`,
          owed: { answer: "ERROR", receiptId: "l" },
        },
      ],
      { kind: "disconnect" },
    ),
  ];
}
