import type { IncomingMessage } from "node:http";
import busboy from "busboy";
import { bodyFailure, onBodyFailure } from "./body-guard.ts";
import { LoopBudget } from "./loop-budget.ts";
import { boundaryOf, PartCharsetStripper } from "./multipart-charset.ts";
import { MAX_PARAMETERS, type ParamCollector, ParamReadError } from "./param-collector.ts";

/** Longest field name read from a multipart part (bytes); a longer one refuses the body. */
const MAX_FIELD_NAME_BYTES = 16 * 1024;

/**
 * Bytes handed to the parser between two looks at the clock. busboy parses synchronously, about
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
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        defCharset: "utf8",
        limits: {
          fieldNameSize: MAX_FIELD_NAME_BYTES,
          fieldSize: limitBytes,
          // busboy reports the limit when the count reaches it, so one more part than we allow;
          // its own caps bound a part's header block (16 KiB, 2000 lines).
          parts: MAX_PARAMETERS + 1,
        },
      });
    } catch (err) {
      reject(malformed(err));
      return;
    }
    // Text parts are UTF-8 whatever charset they declare (see PartCharsetStripper).
    const boundary = boundaryOf(req.headers["content-type"] ?? "");
    const stripper = boundary === undefined ? undefined : new PartCharsetStripper(boundary, (b) => parser.write(b));
    let settled = false;
    const stopFailure = onBodyFailure(req, (err) => fail(err));
    const fail = (err: ParamReadError) => {
      if (settled) return;
      settled = true;
      stopFailure();
      req.off("data", onData);
      req.off("end", onEnd);
      // Drain what the client still sends, so that the answer can be written and read.
      req.resume();
      reject(err);
    };

    // Parts are counted here, file parts included, so that a body of too many parts is told so
    // (rather than the request-wide parameter count, which its fields would reach first).
    let parts = 0;
    const tooMany = () => fail(new ParamReadError("too-many-parameters", `more than ${MAX_PARAMETERS} multipart parts; send fewer`));
    parser.on("field", (name, value, info) => {
      if (settled) return;
      if (++parts > MAX_PARAMETERS) {
        tooMany();
        return;
      }
      if (info.nameTruncated) {
        fail(malformed(new Error(`a field name is longer than ${MAX_FIELD_NAME_BYTES} bytes`)));
        return;
      }
      try {
        into.add(name, value);
      } catch (err) {
        fail(err as ParamReadError);
      }
    });
    parser.on("file", (_name, stream) => {
      // The parser reports the same error on itself; this one only must not reach the process.
      stream.on("error", () => {});
      stream.resume();
      if (++parts > MAX_PARAMETERS) tooMany();
    });
    parser.on("partsLimit", tooMany);
    parser.on("error", (err) => fail(malformed(err)));
    parser.on("close", () => {
      if (settled) return;
      settled = true;
      stopFailure();
      resolve();
    });

    // The body goes to the parser in pieces, a slice of the event loop at a time; the request is
    // paused while pieces wait, so no more than one read is held here.
    const budget = new LoopBudget();
    const waiting: Buffer[] = [];
    let bytes = 0;
    let ended = false;
    let pumping = false;
    const feed = (piece: Buffer) => (stripper ? stripper.write(piece) : parser.write(piece));
    const pump = async () => {
      if (pumping) return;
      pumping = true;
      while (!settled && waiting.length > 0) {
        const chunk = waiting.shift() as Buffer;
        for (let at = 0; at < chunk.length && !settled; at += PIECE_BYTES) {
          feed(chunk.subarray(at, at + PIECE_BYTES));
          if (budget.due()) await budget.pause();
        }
      }
      pumping = false;
      if (settled) return;
      if (ended) {
        stripper?.end();
        parser.end();
      } else {
        req.resume();
      }
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limitBytes) {
        fail(new ParamReadError("body-too-large", `request body larger than ${limitBytes} bytes (BODY_LIMIT_BYTES)`));
        return;
      }
      waiting.push(chunk);
      req.pause();
      void pump();
    };
    const onEnd = () => {
      ended = true;
      void pump();
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", (err) => fail(new ParamReadError("unreadable-body", `request body could not be read: ${err.message}`, { cause: err })));
  });
}

function malformed(err: unknown): ParamReadError {
  const detail = err instanceof Error ? err.message : String(err);
  return new ParamReadError("malformed-multipart", `malformed multipart/form-data body (${detail})`, { cause: err });
}
