/**
 * The pure parts of CONNECT (protocols.md 2.3): the heart-beat negotiation and how `login` and
 * `passcode` are read as credentials.
 */

/** What CONNECTED says about heart-beats, and how often the server then beats (0: never). */
export interface HeartBeatReply {
  header: string;
  sendEveryMs: number;
}

/**
 * STOMP heart-beat negotiation. The server asks for the client's beats every `beatMs` (the
 * original's `0,30000` with its 30 s setting) but counts any frame, EOL, WebSocket ping or pong as
 * activity, since the Java client announces beats it never sends. It offers beats of its own only
 * when the client asks for them (`cy` > 0), at the slower of the two: the Java client announces
 * `30,0`, so it gets `0,<beatMs>` exactly as from the original. A missing or malformed header is
 * `0,0`.
 */
export function heartBeatReply(raw: string | undefined, beatMs: number): HeartBeatReply {
  const m = /^\s*(\d{1,9})\s*,\s*(\d{1,9})\s*$/.exec(raw ?? "");
  const wantsEvery = m ? Number(m[2]) : 0;
  const sx = wantsEvery > 0 ? Math.max(wantsEvery, beatMs) : 0;
  return { header: `${sx},${beatMs}`, sendEveryMs: sx };
}

/**
 * The `Authorization` values CONNECT's credentials may stand for, tried in order: Basic
 * `login:passcode` (API_BASIC_AUTH, the original's user and password), then the passcode as an API
 * key (API_KEYS; `login` is then free, e.g. `apikey`). Nothing when both are empty.
 */
export function loginAuthorizations(login: string, passcode: string): string[] {
  const out: string[] = [];
  if (login !== "") out.push(`Basic ${Buffer.from(`${login}:${passcode}`, "utf8").toString("base64")}`);
  if (passcode !== "" && !/\s/.test(passcode)) out.push(`Bearer ${passcode}`);
  return out;
}

/** The versions the broker speaks; their framing is the same (headers are escaped STOMP 1.2 style both ways whatever the version, as the original did). */
const VERSIONS = ["1.2", "1.1", "1.0"];

/**
 * The highest version both sides speak. The Java client accepts only 1.1 and gets it, as it got
 * it from the original; a client that accepts 1.2 gets 1.2, which tells stompjs to escape its
 * header values (it escapes nothing under 1.1, so a value with `:` or a newline would break the
 * frame). A CONNECT that accepts none of them, or names none, is answered 1.1 as by the original.
 */
export function negotiatedVersion(acceptVersion: string | undefined): string {
  const offered = new Set((acceptVersion ?? "").split(",").map((v) => v.trim()));
  return VERSIONS.find((v) => offered.has(v)) ?? "1.1";
}
