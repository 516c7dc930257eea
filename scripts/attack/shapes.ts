/** The hostile request shapes F1-F6: each sends its requests and checks every answer. */
import { Agent, request } from "node:http";
import { rawCall, rawExchange, readReply } from "../../test/support/raw-http.ts";
import { describeError } from "./probe.ts";
import { existProblem, type Shape, type ShapeContext, snippet, Tally } from "./shape.ts";
import { multipartBody, oneByteChunks, requestHead, splitAnswers } from "./wire.ts";

const EXIST = "/event-m/rest/exist";
const FORM = { "content-type": "application/x-www-form-urlencoded" };
const BOUNDARY = "XX";
const kib = (n: number) => `${Math.round(n / 1024)} KiB`;

/** Host and the framing headers of a hand-written request; `Connection: close` so the answer ends with the connection. */
function rawHeaders(ctx: ShapeContext, extra: Record<string, string>): Record<string, string> {
  return { Host: new URL(ctx.url).host, ...extra, Connection: "close" };
}

/** One form POST to rest/exist whose answer must be an exist answer. */
async function postExist(ctx: ShapeContext, body: string, headers: Record<string, string>, booleanOnly = false) {
  const t = new Tally();
  try {
    const r = await rawCall(ctx.url, { method: "POST", path: EXIST, headers, body, timeoutMs: ctx.sizes.hangMs });
    t.record(existProblem(r, booleanOnly));
  } catch (err) {
    t.record(`no answer: ${describeError(err)}`);
  }
  return t.outcome();
}

/** Hand-written request bytes on a fresh connection; the first answer, or what went wrong. */
async function exchangeOne(ctx: ShapeContext, bytes: string) {
  const ex = await rawExchange(ctx.url, bytes, ctx.sizes.hangMs);
  return { answer: splitAnswers(ex.text).answers[0], ex };
}

const f1: Shape = {
  name: "multipart-unterminated-file",
  family: "F1",
  what: () => `POST ${EXIST} multipart, one file part, no closing boundary`,
  run: async (ctx) => {
    const t = new Tally();
    const body = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\n\r\nabc`;
    try {
      const r = await rawCall(ctx.url, {
        method: "POST",
        path: EXIST,
        headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
        body,
        timeoutMs: ctx.sizes.hangMs,
      });
      t.record(
        r.status >= 500 || r.json === undefined ? `answered HTTP ${r.status} ${snippet(r.text)}: want a JSON answer, not 5xx` : undefined,
      );
    } catch (err) {
      t.record(`no answer: ${describeError(err)} (did the gateway crash?)`);
    }
    return t.outcome();
  },
};

const formPlus: Shape = {
  name: "form-plus-1MiB",
  family: "F2",
  what: (s) => `POST ${EXIST} form body topic= and ${kib(s.formBytes)} of '+'`,
  run: (ctx) => postExist(ctx, `topic=${"+".repeat(ctx.sizes.formBytes - 6)}`, FORM),
};

const queryPlus: Shape = {
  name: "query-plus-250KiB",
  family: "F2",
  what: (s) => `GET ${EXIST}?topic= and a ${kib(s.queryBytes)} query string of '+'`,
  run: async (ctx) => {
    const t = new Tally();
    const path = `${EXIST}?topic=${"+".repeat(ctx.sizes.queryBytes - "topic=".length)}`;
    try {
      t.record(existProblem(await rawCall(ctx.url, { path, timeoutMs: ctx.sizes.hangMs })));
    } catch (err) {
      t.record(`no answer: ${describeError(err)}`);
    }
    return t.outcome();
  },
};

const formPercent: Shape = {
  name: "form-percent-1MiB",
  family: "F2",
  what: (s) => `POST ${EXIST} form body topic= and ${kib(s.formBytes)} of '%'`,
  run: (ctx) => postExist(ctx, `topic=${"%".repeat(ctx.sizes.formBytes - 6)}`, FORM),
};

const formAmp: Shape = {
  name: "form-amp-1MiB",
  family: "F2",
  what: (s) => `POST ${EXIST} form body topic=a and ${kib(s.formBytes)} of '&' (empty pairs)`,
  run: (ctx) => postExist(ctx, `topic=a${"&".repeat(ctx.sizes.formBytes - 7)}`, FORM, true),
};

/** `topic=aaa…` as `n` one-byte chunks: a valid form whichever way it is framed. */
const chunkedTopic = (n: number) => oneByteChunks(`topic=${"a".repeat(n - 6)}`);

const chunkedForm: Shape = {
  name: "chunked-100k-form",
  family: "F3",
  what: (s) => `POST ${EXIST} form body topic=aaa… in ${s.chunks} one-byte chunks`,
  run: async (ctx) => {
    const t = new Tally();
    const head = requestHead("POST", EXIST, rawHeaders(ctx, { ...FORM, "Transfer-Encoding": "chunked" }));
    try {
      const { answer, ex } = await exchangeOne(ctx, head + chunkedTopic(ctx.sizes.chunks));
      t.record(answer ? existProblem({ status: answer.status, json: answer.json, text: answer.body }) : `no answer: ${snippet(ex.text)}`);
    } catch (err) {
      t.record(`no answer: ${describeError(err)}`);
    }
    return t.outcome();
  },
};

const chunkedUnread: Shape = {
  name: "chunked-100k-unread",
  family: "F3",
  what: (s) => `GET /event-m/admin/getVersion (reads no body) with ${s.chunks} one-byte chunks of body`,
  run: async (ctx) => {
    const t = new Tally();
    const head = requestHead("GET", "/event-m/admin/getVersion", rawHeaders(ctx, { "Transfer-Encoding": "chunked" }));
    try {
      const { answer, ex } = await exchangeOne(ctx, head + chunkedTopic(ctx.sizes.chunks));
      const j = answer?.json as { eventVersion?: unknown; data?: { eventVersion?: unknown } } | undefined;
      const version = j?.data?.eventVersion ?? j?.eventVersion;
      if (!answer) t.record(`no answer: ${snippet(ex.text)}`);
      else if (answer.status !== 200 || typeof version !== "string")
        t.record(`answered HTTP ${answer.status} ${snippet(answer.body)}: want getVersion's answer`);
      else t.record(undefined);
    } catch (err) {
      t.record(`no answer: ${describeError(err)}`);
    }
    return t.outcome();
  },
};

/** The n-th pipelined request's id, echoed in X-Request-Id: how the answers' order is checked. */
const pipeId = (i: number) => `attack-p${i}`;

/** Checks one answer of the n pipelined exist requests: right answer, and the one for request `i`. */
function pipeProblem(
  i: number,
  a: { status: number; json: unknown; body: string; headers: Record<string, string | string[] | undefined> },
) {
  const id = a.headers["x-request-id"];
  if (id !== pipeId(i)) return `answer ${i + 1} is for request "${String(id)}", not ${pipeId(i)}: answers out of order`;
  const p = existProblem({ status: a.status, json: a.json, text: a.body });
  return p && `answer ${i + 1}: ${p}`;
}

const pipeline: Shape = {
  name: "pipeline-2000",
  family: "F4",
  what: (s) => `${s.pipeline} GET ${EXIST}?topic=pN pipelined in one socket write`,
  run: async (ctx) => {
    const n = ctx.sizes.pipeline;
    const t = new Tally();
    const host = new URL(ctx.url).host;
    const bytes = Array.from({ length: n }, (_, i) =>
      requestHead("GET", `${EXIST}?topic=p${i}`, {
        Host: host,
        "X-Request-Id": pipeId(i),
        ...(i === n - 1 ? { Connection: "close" } : {}),
      }),
    ).join("");
    try {
      const ex = await rawExchange(ctx.url, bytes, ctx.sizes.hangMs);
      const { answers, leftoverBytes } = splitAnswers(ex.text);
      for (let i = 0; i < n; i++) {
        const a = answers[i];
        t.record(a ? pipeProblem(i, a) : `no answer to request ${i + 1}`);
      }
      if (answers.length !== n) t.fail(`${answers.length} answers came back for ${n} requests`);
      if (leftoverBytes > 0) t.fail(`${leftoverBytes} bytes after the last complete answer: an answer was cut off`);
    } catch (err) {
      while (t.requests < n) t.record(`no answer: ${describeError(err)}`);
    }
    return t.outcome();
  },
};

const pipelineBaseline: Shape = {
  name: "pipeline-2000-50conn",
  family: "F4",
  baseline: true,
  what: (s) => `baseline: the same ${s.pipeline} requests over ${s.connections} keep-alive connections`,
  run: async (ctx) => {
    const n = ctx.sizes.pipeline;
    const t = new Tally();
    const url = new URL(ctx.url);
    const agent = new Agent({ keepAlive: true, maxSockets: ctx.sizes.connections });
    const one = (i: number) =>
      new Promise<Awaited<ReturnType<typeof readReply>>>((resolve, reject) => {
        const r = request(
          {
            host: url.hostname,
            port: url.port,
            path: `${EXIST}?topic=p${i}`,
            agent,
            headers: { "x-request-id": pipeId(i) },
            timeout: ctx.sizes.hangMs,
          },
          (res) => readReply(res).then(resolve, reject),
        );
        r.on("timeout", () => r.destroy(new Error(`no answer within ${ctx.sizes.hangMs} ms`)));
        r.on("error", reject);
        r.end();
      });
    let next = 0;
    const lane = async () => {
      while (next < n) {
        const i = next++;
        try {
          t.record(pipeProblem(i, { ...(await one(i)), body: "" }));
        } catch (err) {
          t.record(`request ${i + 1}: no answer: ${describeError(err)}`);
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: ctx.sizes.connections }, lane));
    } finally {
      agent.destroy();
    }
    return t.outcome();
  },
};

/** `topic` and then parameters p1, p2 … up to `count` in all. */
const fields = (count: number): [string, string][] => [
  ["topic", "attack.absent"],
  ...Array.from({ length: count - 1 }, (_, i): [string, string] => [`p${i + 1}`, "v"]),
];

const multipartParts: Shape = {
  name: "multipart-9999-parts",
  family: "F5",
  what: (s) => `POST ${EXIST} multipart body of ${s.parts} tiny text parts`,
  run: (ctx) =>
    postExist(ctx, multipartBody("b0undary", fields(ctx.sizes.parts)), { "content-type": "multipart/form-data; boundary=b0undary" }, true),
};

const formParams: Shape = {
  name: "form-9999-params",
  family: "F5",
  baseline: true,
  what: (s) => `baseline: the same ${s.parts} parameters as a url-encoded form`,
  run: (ctx) => postExist(ctx, new URLSearchParams(fields(ctx.sizes.parts)).toString(), FORM, true),
};

/**
 * Chunk sizes llhttp refuses (`zz`, `-1`): a 400 or a close. `ffffffffffffffff` is framing llhttp
 * accepts (it would wait for 2^64-1 bytes): the gateway refuses a first chunk larger than
 * BODY_LIMIT_BYTES at once, in the variant's shape (code 200203) with `Connection: close`.
 */
const BAD_SIZES = ["zz", "ffffffffffffffff", "-1"];

function badSizeProblem(size: string, ex: { status: number; text: string; json: unknown }): string | undefined {
  if (ex.status === 400 || ex.status === 0) return undefined;
  const code = (ex.json as { code?: unknown } | undefined)?.code;
  if (size === "ffffffffffffffff" && ex.status === 200 && code === 200203 && /\r\nconnection: close\r\n/i.test(ex.text)) return undefined;
  return `chunk size ${size}: answered HTTP ${ex.status} ${ex.text.slice(ex.text.indexOf("\r\n\r\n") + 4, 200)}, want 400 or a close${size === "ffffffffffffffff" ? " (or 200203 and a close)" : ""}`;
}

const chunkedBadSize: Shape = {
  name: "chunked-bad-size",
  family: "F6",
  what: (s) => `POST ${EXIST} chunked, chunk sizes ${BAD_SIZES.join(", ")} (at once; a hang is no answer in ${s.hangMs / 1000} s)`,
  run: async (ctx) => {
    const t = new Tally();
    const head = requestHead("POST", EXIST, rawHeaders(ctx, { ...FORM, "Transfer-Encoding": "chunked" }));
    const verdicts = await Promise.all(
      BAD_SIZES.map(async (size) => {
        try {
          const ex = await rawExchange(ctx.url, `${head}${size}\r\ntopic=x\r\n0\r\n\r\n`, ctx.sizes.hangMs);
          return badSizeProblem(size, ex);
        } catch (err) {
          return `chunk size ${size}: ${describeError(err)}: the request hangs, want 400 or a close at once`;
        }
      }),
    );
    for (const v of verdicts) t.record(v);
    return t.outcome();
  },
};

/** F1-F6 in run order, except F1 (it crashed the gateway before the fix): run.ts puts it last. */
export const WIRE_SHAPES: readonly Shape[] = [
  formPlus,
  queryPlus,
  formPercent,
  formAmp,
  chunkedForm,
  chunkedUnread,
  pipeline,
  pipelineBaseline,
  multipartParts,
  formParams,
  chunkedBadSize,
];
export const CRASH_SHAPE: Shape = f1;
