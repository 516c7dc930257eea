import type { IncomingMessage } from "node:http";
import { Busboy, type BusboyInstance } from "@fastify/busboy";
import { bodyFailure, onBodyFailure } from "./body-guard.ts";
import { LoopBudget } from "./loop-budget.ts";
import { boundaryOf, PartCharsetStripper } from "./multipart-charset.ts";
import { MAX_PARAMETERS, type ParamCollector, ParamReadError } from "./param-collector.ts";

/** Longest field name read from a multipart part (bytes); a longer one refuses the body. */
const MAX_FIELD_NAME_BYTES = 16 * 1024;

/**
 * Bytes handed to the parser between two looks at the clock. The parser (@fastify/busboy) parses synchronously, about
 * 8 µs per part: a 570 KB body of 9,999 tiny parts was one 160–400 ms stretch of the event loop.
 * Fed in pieces with a yield whenever the slice is used up (loop-budget.ts), no stretch is longer
 * than a slice plus one piece.
 */
const PIECE_BYTES = 8 * 1024;

/**
 * Reads the text fields of a `multipart/form-data` body into `into` as parameters (the
 * original's multipart resolver); file parts are read past and dropped. Streaming, so the work is
 * linear in the body and nothing is held but the field values: at most `limitBytes` are read
 * (a longer body refuses with "body-too-large"), and the number of parts, field-name length and
 * part headers are capped. A malformed body rejects with "malformed-multipart". Every stream
 * made here keeps an error listener for its whole life: a file part cut short emits its error on
 * the part's own stream, and with no listener there it ended the gateway process.
 */
export function readMultipart(req: IncomingMessage, into: ParamCollector, limitBytes: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = bodyFailure(req);
    if (failed) {
      reject(failed);
      return;
    }
    let parser: BusboyInstance;
    try {
      parser = openParser(req, limitBytes);
    } catch (err) {
      reject(malformed(err));
      return;
    }
    new MultipartRead(req, parser, into, limitBytes, { resolve, reject }).start();
  });
}

function openParser(req: IncomingMessage, limitBytes: number): BusboyInstance {
  return new Busboy({
    headers: req.headers as { "content-type": string },
    defCharset: "utf8",
    limits: {
      fieldSize: limitBytes,
      // The parser reports the limit when the count reaches it, so one more part than we allow.
      parts: MAX_PARAMETERS + 1,
      // A part's header block: 2000 lines at most, and big enough for a field name just over
      // MAX_FIELD_NAME_BYTES to arrive whole (its length is checked on the field event).
      headerPairs: 2000,
      headerSize: MAX_FIELD_NAME_BYTES + 4 * 1024,
    },
  });
}

/**
 * One multipart body being read: the parser's events counted and collected, the request's
 * chunks fed to the parser in pieces, and the promise settled once, by the first of the parser's
 * close, a refusal or a body failure.
 */
class MultipartRead {
  private readonly req: IncomingMessage;
  private readonly parser: BusboyInstance;
  private readonly into: ParamCollector;
  private readonly limitBytes: number;
  private readonly settle: { resolve: () => void; reject: (err: ParamReadError) => void };
  /** Text parts are UTF-8 whatever charset they declare (see PartCharsetStripper). */
  private readonly stripper: PartCharsetStripper | undefined;
  private settled = false;
  private stopFailure: () => void = () => {};
  /**
   * Parts are counted here, file parts included, so that a body of too many parts is told so
   * (rather than the request-wide parameter count, which its fields would reach first).
   */
  private parts = 0;
  private readonly budget = new LoopBudget();
  /** Chunks read and not yet fed; the request is paused while they wait. */
  private readonly waiting: Buffer[] = [];
  private bytes = 0;
  private ended = false;
  private pumping = false;

  constructor(
    req: IncomingMessage,
    parser: BusboyInstance,
    into: ParamCollector,
    limitBytes: number,
    settle: { resolve: () => void; reject: (err: ParamReadError) => void },
  ) {
    this.req = req;
    this.parser = parser;
    this.into = into;
    this.limitBytes = limitBytes;
    this.settle = settle;
    const boundary = boundaryOf(req.headers["content-type"] ?? "");
    this.stripper =
      boundary === undefined
        ? undefined
        : new PartCharsetStripper(
            boundary,
            (b) => parser.write(b),
            (why) => this.fail(malformed(new Error(why))),
          );
  }

  start(): void {
    this.stopFailure = onBodyFailure(this.req, (err) => this.fail(err));
    this.listenToParser();
    this.req.on("data", this.onData);
    this.req.on("end", this.onEnd);
    this.req.on("error", (err) =>
      this.fail(new ParamReadError("unreadable-body", `request body could not be read: ${err.message}`, { cause: err })),
    );
  }

  private listenToParser(): void {
    const tooMany = () => this.fail(new ParamReadError("too-many-parameters", `more than ${MAX_PARAMETERS} multipart parts; send fewer`));
    this.parser.on("field", (name, value) => {
      if (this.settled) return;
      if (++this.parts > MAX_PARAMETERS) {
        tooMany();
        return;
      }
      // This parser does not cap multipart field names itself: they are measured here.
      if (Buffer.byteLength(name) > MAX_FIELD_NAME_BYTES) {
        this.fail(malformed(new Error(`a field name is longer than ${MAX_FIELD_NAME_BYTES} bytes`)));
        return;
      }
      try {
        this.into.add(name, value);
      } catch (err) {
        this.fail(err as ParamReadError);
      }
    });
    this.parser.on("file", (_name, stream) => {
      // The parser reports the same error on itself; this one only must not reach the process.
      stream.on("error", () => {});
      stream.resume();
      if (++this.parts > MAX_PARAMETERS) tooMany();
    });
    this.parser.on("partsLimit", tooMany);
    this.parser.on("error", (err) => this.fail(malformed(err)));
    this.parser.on("finish", () => {
      if (this.settled) return;
      this.settled = true;
      this.stopFailure();
      this.settle.resolve();
    });
  }

  private fail(err: ParamReadError): void {
    if (this.settled) return;
    this.settled = true;
    this.stopFailure();
    this.req.off("data", this.onData);
    this.req.off("end", this.onEnd);
    // Drain what the client still sends, so that the answer can be written and read.
    this.req.resume();
    this.settle.reject(err);
  }

  private readonly onData = (chunk: Buffer): void => {
    this.bytes += chunk.length;
    if (this.bytes > this.limitBytes) {
      this.fail(new ParamReadError("body-too-large", `request body larger than ${this.limitBytes} bytes (BODY_LIMIT_BYTES)`));
      return;
    }
    this.waiting.push(chunk);
    this.req.pause();
    void this.pump();
  };

  private readonly onEnd = (): void => {
    this.ended = true;
    void this.pump();
  };

  /**
   * Feeds the waiting chunks to the parser in pieces, a slice of the event loop at a time; the
   * request stays paused while pieces wait, so no more than one read is held here.
   */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    while (!this.settled && this.waiting.length > 0) {
      const chunk = this.waiting.shift() as Buffer;
      for (let at = 0; at < chunk.length && !this.settled; at += PIECE_BYTES) {
        this.feed(chunk.subarray(at, at + PIECE_BYTES));
        if (this.budget.due()) await this.budget.pause();
      }
    }
    this.pumping = false;
    if (this.settled) return;
    if (this.ended) {
      this.stripper?.end();
      this.parser.end();
    } else {
      this.req.resume();
    }
  }

  private feed(piece: Buffer): void {
    if (this.stripper) this.stripper.write(piece);
    else this.parser.write(piece);
  }
}

function malformed(err: unknown): ParamReadError {
  const detail = err instanceof Error ? err.message : String(err);
  return new ParamReadError("malformed-multipart", `malformed multipart/form-data body (${detail})`, { cause: err });
}
