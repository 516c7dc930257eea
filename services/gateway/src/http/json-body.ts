import type { Request, Response } from "express";
import { MAX_CALL_CHARS, scanJson } from "../jsonrpc/json-scan.ts";
import { LoopBudget } from "./loop-budget.ts";
import { ParamReadError } from "./param-collector.ts";
import { bodyReader } from "./request-params.ts";

/**
 * The JSON body of an operation declaring `body: "json"` (rest/publishBatch), read as JSON-RPC
 * reads its body: the same bounded reader (BODY_LIMIT_BYTES, inflated when encoded), then the
 * same depth scan in slices of the event loop before one JSON.parse. The parse is bounded by
 * MAX_CALL_CHARS (about 15–30 ms on a small machine): a longer body is "body-too-large" even when
 * BODY_LIMIT_BYTES is raised above it. Rejects with a ParamReadError.
 */
export function jsonBodyReader(limitBytes: number): (req: Request, res: Response) => Promise<unknown> {
  const readBody = bodyReader(limitBytes);
  return async (req, res) => {
    let text = (await readBody(req, res)).toString("utf8");
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text.length > MAX_CALL_CHARS) {
      throw new ParamReadError("body-too-large", `JSON body longer than ${MAX_CALL_CHARS} characters; send less per request`);
    }
    const budget = new LoopBudget();
    const scan = await scanJson(text, () => budget.maybePause());
    if (scan.kind === "too-deep") throw new ParamReadError("malformed-json", "JSON nested deeper than 32 levels");
    if (scan.kind === "malformed" || scan.kind === "too-many-calls") throw new ParamReadError("malformed-json", "request body is not JSON");
    await budget.maybePause();
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new ParamReadError("malformed-json", "request body is not JSON", { cause: err });
    }
  };
}
