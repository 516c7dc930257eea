import type { IncomingMessage } from "node:http";
import busboy from "busboy";
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
    let settled = false;
    const fail = (err: ParamReadError) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
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
    req.on("error", (err) => fail(new ParamReadError("unreadable-body", `request body could not be read: ${err.message}`)));
    parser.on("field", (name, value, info) => {
      if (settled) return;
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
    parser.on("file", (_name, stream) => stream.resume());
    const tooMany = () => fail(new ParamReadError("too-many-parameters", `more than ${MAX_PARAMETERS} multipart parts; send fewer`));
    parser.on("partsLimit", tooMany);
    parser.on("error", (err) => fail(malformed(err)));
    parser.on("close", () => {
      if (settled) return;
      settled = true;
      resolve();
    });
    req.pipe(parser);
  });
}

function malformed(err: unknown): ParamReadError {
  const detail = err instanceof Error ? err.message : String(err);
  return new ParamReadError("malformed-multipart", `malformed multipart/form-data body (${detail})`, { cause: err });
}
