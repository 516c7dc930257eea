import type { IncomingMessage } from "node:http";
import express, { type Request, type Response } from "express";
import { bodyFailure, onBodyFailure } from "./body-guard.ts";
import { readMultipart } from "./multipart-reader.ts";
import { ParamCollector, ParamReadError, type RawParams } from "./param-collector.ts";
import { parseQueryString, readUrlEncoded } from "./url-encoded.ts";

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
  const readWholeBody = bodyReader(limitBytes);
  return async (req, res) => {
    const into = new ParamCollector();
    const url = req.originalUrl;
    const q = url.indexOf("?");
    if (q >= 0) parseQueryString(url.slice(q + 1), into);
    const ct = req.headers["content-type"] ?? "";
    if (/^multipart\/form-data/i.test(ct)) {
      await readMultipart(req, into, limitBytes);
    } else if (/^application\/x-www-form-urlencoded/i.test(ct) && FORM_METHODS.has(req.method)) {
      // The original forced UTF-8 on every request (Spring Boot's CharacterEncodingFilter), so a
      // declared charset changes nothing.
      await readUrlEncoded(await readWholeBody(req, res), into);
    }
    return into.params;
  };
}

/**
 * Reads a whole request body of at most `limitBytes`, whatever its Content-Type (form bodies
 * here, JSON-RPC's JSON), inflated when it has a Content-Encoding; rejects with a ParamReadError.
 */
export function bodyReader(limitBytes: number): (req: Request, res: Response) => Promise<Buffer> {
  // Only a body with a Content-Encoding is read by body-parser (decompression with a size cap);
  // every other body, chunked or not, by readBody.
  const readEncoded = express.raw({ limit: limitBytes, type: () => true });
  const encodedBody = (req: Request, res: Response) =>
    untilBodyFails(
      req,
      new Promise<Buffer>((resolve, reject) =>
        readEncoded(req, res, (err?: unknown) => {
          if (err) reject(rawFailure(err, limitBytes));
          else resolve(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));
        }),
      ),
    );
  return (req, res) => (req.headers["content-encoding"] === undefined ? readBody(req, limitBytes) : encodedBody(req, res));
}

/** `pending`, or the body failure of `req` (body-guard.ts) if that comes first. */
function untilBodyFails<T>(req: IncomingMessage, pending: Promise<T>): Promise<T> {
  const failed = bodyFailure(req);
  if (failed) return Promise.reject(failed);
  return new Promise<T>((resolve, reject) => {
    const stop = onBodyFailure(req, reject);
    pending.then(
      (v) => {
        stop();
        resolve(v);
      },
      (err: unknown) => {
        stop();
        reject(err);
      },
    );
  });
}

/**
 * The whole body of `req` (Content-Length or chunked, no Content-Encoding), at most `limitBytes`
 * (more rejects with "body-too-large" without reading on), or a ParamReadError when the request
 * ends short (the client went away) or its body fails (body-guard.ts).
 */
function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > limitBytes) {
    return Promise.reject(tooLarge(limitBytes));
  }
  const failed = bodyFailure(req);
  if (failed) return Promise.reject(failed);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const done = (err?: ParamReadError) => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("aborted", onAborted);
      req.off("error", onError);
      stopFailure();
      if (err) {
        // Drain what the client still sends, so that the answer can be written and read.
        req.resume();
        reject(err);
      }
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limitBytes) return done(tooLarge(limitBytes));
      chunks.push(chunk);
    };
    const onEnd = () => {
      if (declared !== undefined && received !== Number(declared)) return done(unreadable("request size did not match content length"));
      done();
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, received));
    };
    const onAborted = () => done(unreadable("request aborted"));
    const onError = (err: Error) => done(unreadable(err.message, err));
    const stopFailure = onBodyFailure(req, done);
    req.on("data", onData);
    req.once("end", onEnd);
    req.once("aborted", onAborted);
    req.once("error", onError);
  });
}

function tooLarge(limitBytes: number): ParamReadError {
  return new ParamReadError("body-too-large", `request body larger than ${limitBytes} bytes (BODY_LIMIT_BYTES)`);
}

function unreadable(detail: string, cause?: unknown): ParamReadError {
  return new ParamReadError("unreadable-body", `request body could not be read: ${detail}`, { cause });
}

function rawFailure(err: unknown, limitBytes: number): ParamReadError {
  if ((err as { type?: unknown } | null)?.type === "entity.too.large") {
    return new ParamReadError("body-too-large", `request body larger than ${limitBytes} bytes (BODY_LIMIT_BYTES)`, { cause: err });
  }
  const detail = err instanceof Error ? err.message : String(err);
  return unreadable(detail, err);
}
