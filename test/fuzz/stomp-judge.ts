import type { OwedReply, StompCase } from "./stomp-cases.ts";
import { type ServerFrame, serverFrames, type WsExchange } from "./stomp-wire.ts";

const SERVER_COMMANDS = new Set(["CONNECTED", "RECEIPT", "ERROR", "MESSAGE"]);

function replyProblem(got: ServerFrame, owed: OwedReply, i: number): string | null {
  const ok = owed.answer === "RECEIPT|ERROR" ? got.command === "RECEIPT" || got.command === "ERROR" : got.command === owed.answer;
  if (!ok) return `reply ${i + 1} is ${got.command}, ${owed.answer} was owed`;
  if (owed.receiptId !== undefined && got.headers.get("receipt-id") !== owed.receiptId) {
    return `reply ${i + 1} (${got.command}) has receipt-id ${got.headers.get("receipt-id")}, ${owed.receiptId} was owed`;
  }
  return null;
}

function show(frames: readonly ServerFrame[]): string {
  const s = frames.map((f) => `${f.command}${f.headers.has("receipt-id") ? `(${f.headers.get("receipt-id")})` : ""}`);
  return s.length > 12 ? `${s.slice(0, 6).join(" ")} … ${s.slice(-6).join(" ")} (${s.length})` : s.join(" ");
}

/**
 * What is wrong with the server's side of `ex` for case `c`, or null: every frame the server sent
 * is a STOMP server frame; the replies come in frame order, one per answered frame, each the
 * command owed with the `receipt-id` owed; after them comes exactly the ending the case asks for
 * (an ERROR then close 1002; a RECEIPT `bye` then close 1000; or for a refused message, its close
 * code after a prefix of the replies), and nothing is answered after it; the server closes within
 * the case's bound.
 */
export function judgeStomp(c: StompCase, ex: WsExchange): string | null {
  const frames = serverFrames(ex.messages);
  if (frames === null)
    return `the server sent bytes that are no STOMP frame: ${JSON.stringify(ex.messages.map((m) => m.toString("latin1").slice(0, 200)))}`;
  const odd = frames.find((f) => !SERVER_COMMANDS.has(f.command));
  if (odd) return `the server sent ${odd.command}`;
  const replies = frames.filter((f) => f.command !== "MESSAGE");
  const seen = `replies: ${show(replies)}; close ${ex.closeCode ?? "none"} after ${ex.ms} ms`;
  if (ex.timedOut) return `not closed within ${c.boundMs} ms; ${seen}`;
  const e = c.ending;
  const owedCount = c.owed.length + (e.kind === "transport" ? 0 : 1);
  if (replies.length > owedCount)
    return `${replies.length} replies to ${owedCount} answerable frames: something after the ending was answered; ${seen}`;
  if (e.kind !== "transport" && replies.length < owedCount) return `${replies.length} of ${owedCount} replies; ${seen}`;
  for (let i = 0; i < Math.min(replies.length, c.owed.length); i++) {
    const problem = replyProblem(replies[i] as ServerFrame, c.owed[i] as OwedReply, i);
    if (problem) return `${problem}; ${seen}`;
  }
  const last = replies.at(-1);
  if (e.kind === "refused") {
    const problem = replyProblem(last as ServerFrame, { answer: "ERROR", receiptId: e.piece.echoesId ? "x" : undefined }, owedCount - 1);
    if (problem) return `the refused frame: ${problem}; ${seen}`;
    if (!last?.headers.get("message")) return `the ERROR to the refused frame names no fault (no message header); ${seen}`;
    if (ex.closeCode !== 1002) return `closed ${ex.closeCode ?? "without a close frame"} after the ERROR, not 1002; ${seen}`;
  } else if (e.kind === "disconnect") {
    if (last?.command !== "RECEIPT" || last.headers.get("receipt-id") !== "bye") return `DISCONNECT not answered RECEIPT bye; ${seen}`;
    if (ex.closeCode !== 1000) return `closed ${ex.closeCode ?? "without a close frame"} after DISCONNECT, not 1000; ${seen}`;
  } else if (ex.closeCode !== e.code) {
    return `closed ${ex.closeCode ?? "without a close frame"}, not ${e.code}; ${seen}`;
  }
  return null;
}
