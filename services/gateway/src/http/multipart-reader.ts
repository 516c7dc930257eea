import type { IncomingMessage } from "node:http";
import busboy from "busboy";
import { boundaryOf, PartCharsetStripper } from "./multipart-charset.ts";
import { MAX_PARAMETERS, type ParamCollector, ParamReadError } from "./param-collector.ts";

/** Longest field name read from a multipart part (bytes); a longer one refuses the body. */
const MAX_FIELD_NAME_BYTES = 16 * 1024;

/**
 * Reads the text fields of a `multipart/form-data` body into `into` as parameters (the
 * original's multipart resolver); file parts are read past and dropped. Streaming, so the work is
 * linear in the body and nothing is held but the field values: at most `limitBytes` are read
 * (a longer body refuses with "body-too-large"), and the number of parts, field-name length and
 * part headers are capped. A malformed body rejects with "malformed-multipart".
 */
export function readMultipart(req: IncomingMessage, into: ParamCollector, limitBytes: number): Promise<void> {
  return new Promise((resolve, reject) => {
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
    const stripper = boundary === undefined ? undefined : new PartCharsetStripper(boundary);
    let settled = false;
    const fail = (err: ParamReadError) => {
      if (settled) return;
      settled = true;
      if (stripper) {
        req.unpipe(stripper);
        stripper.unpipe(parser);
      } else {
        req.unpipe(parser);
      }
      // Drain what the client still sends, so that the answer can be written and read.
      req.resume();
      reject(err);
    };
    let bytes = 0;
    req.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limitBytes) {
        fail(new ParamReadError("body-too-large", `request body larger than ${limitBytes} bytes (BODY_LIMIT_BYTES)`));
      }
    });
    req.on("error", (err) => fail(new ParamReadError("unreadable-body", `request body could not be read: ${err.message}`, { cause: err })));
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
      stream.resume();
      if (++parts > MAX_PARAMETERS) tooMany();
    });
    parser.on("partsLimit", tooMany);
    parser.on("error", (err) => fail(malformed(err)));
    parser.on("close", () => {
      if (settled) return;
      settled = true;
      resolve();
    });
    if (stripper) req.pipe(stripper).pipe(parser);
    else req.pipe(parser);
  });
}

function malformed(err: unknown): ParamReadError {
  const detail = err instanceof Error ? err.message : String(err);
  return new ParamReadError("malformed-multipart", `malformed multipart/form-data body (${detail})`, { cause: err });
}
