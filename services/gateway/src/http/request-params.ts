import express, { type Request, type Response } from "express";
import { readMultipart } from "./multipart-reader.ts";
import { ParamCollector, ParamReadError, type RawParams } from "./param-collector.ts";
import { parseUrlEncoded } from "./url-encoded.ts";

/** Form bodies count for these methods only (behaviour.md 1.2). */
const FORM_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * Reads one request's parameters: the query string, then a urlencoded form body (POST, PUT,
 * PATCH, DELETE: the servlet container's POST parsing plus Spring's form filter) or the text
 * fields of a multipart body. Every other body (JSON, text, anything) is not a parameter source
 * and is left unread. Work is linear in the request and bounded by `limitBytes` and
 * MAX_PARAMETERS; a failure rejects with a ParamReadError saying which limit or rule.
 */
export function paramReader(limitBytes: number): (req: Request, res: Response) => Promise<RawParams> {
  // Only the byte reading (size cap, Content-Encoding, aborted requests) is body-parser's; the
  // parsing is ours, in one linear pass.
  const readRaw = express.raw({ limit: limitBytes, type: () => true });
  const rawBody = (req: Request, res: Response) =>
    new Promise<Buffer>((resolve, reject) =>
      readRaw(req, res, (err?: unknown) => {
        if (err) reject(rawFailure(err, limitBytes));
        else resolve(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
      }),
    );

  /** A body without Content-Encoding and with a Content-Length within the limit (what every client sends) is read here; anything else by body-parser. */
  const body = (req: Request, res: Response): Promise<Buffer> => {
    const length = req.headers["content-length"];
    if (req.headers["content-encoding"] !== undefined || length === undefined || !/^\d{1,9}$/.test(length)) return rawBody(req, res);
    if (Number(length) > limitBytes) return rawBody(req, res);
    return readWhole(req, Number(length));
  };

  return async (req, res) => {
    const into = new ParamCollector();
    const url = req.originalUrl;
    const q = url.indexOf("?");
    if (q >= 0) parseUrlEncoded(url.slice(q + 1), into);
    const ct = req.headers["content-type"] ?? "";
    if (/^multipart\/form-data/i.test(ct)) {
      await readMultipart(req, into, limitBytes);
    } else if (/^application\/x-www-form-urlencoded/i.test(ct) && FORM_METHODS.has(req.method)) {
      // The original forced UTF-8 on every request (Spring Boot's CharacterEncodingFilter), so a
      // declared charset changes nothing.
      parseUrlEncoded((await body(req, res)).toString("utf8"), into);
    }
    return into.params;
  };
}

/**
 * The `length` bytes of a plain body (Node's parser delivers exactly the Content-Length), or a
 * ParamReadError when the request ends short (the client went away).
 */
function readWhole(req: Request, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const done = (err?: Error) => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("aborted", onAborted);
      req.off("error", done);
      if (err) reject(new ParamReadError("unreadable-body", `request body could not be read: ${err.message}`, { cause: err }));
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = () => {
      if (received !== length) return done(new Error("request size did not match content length"));
      done();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, received));
    };
    const onAborted = () => done(new Error("request aborted"));
    req.on("data", onData);
    req.once("end", onEnd);
    req.once("aborted", onAborted);
    req.once("error", done);
  });
}

function rawFailure(err: unknown, limitBytes: number): ParamReadError {
  if ((err as { type?: unknown } | null)?.type === "entity.too.large") {
    return new ParamReadError("body-too-large", `request body larger than ${limitBytes} bytes (BODY_LIMIT_BYTES)`, { cause: err });
  }
  const detail = err instanceof Error ? err.message : String(err);
  return new ParamReadError("unreadable-body", `request body could not be read: ${detail}`, { cause: err });
}
