const LEVELS: Record<number, string> = { 10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR", 60: "FATAL" };
const SKIP = new Set(["level", "time", "pid", "hostname", "service", "msg"]);

/**
 * What a terminal would act on rather than show: C0 controls (newline, CR, ESC…), DEL and C1
 * controls, the Unicode line and paragraph separators and the bidi embeddings, overrides and
 * isolates. Log fields carry caller text (topics, client ids, will topics, URLs, headers); printed
 * raw, a newline forges a whole `[stack] …` line and ESC sequences drive the operator's terminal.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const TERMINAL_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** `text` with every terminal control written as a visible escape (`\n`, `\x1b`, `\u2028`). */
export function escapeControls(text: string): string {
  return text.replace(TERMINAL_CONTROLS, (c) => {
    const named = NAMED[c];
    if (named) return named;
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/**
 * Turns one pino JSON line into `12:00:01 INFO message key=value …`; other lines pass through.
 * Either way every terminal control is escaped, so one printed line is one line of the child's.
 */
export function formatLogLine(line: string): string {
  if (!line.startsWith("{")) return escapeControls(line);
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return escapeControls(line);
  }
  const time = typeof o.time === "number" ? new Date(o.time).toTimeString().slice(0, 8) : "";
  const level = LEVELS[o.level as number] ?? String(o.level ?? "");
  const rest = Object.entries(o)
    .filter(([k]) => !SKIP.has(k))
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(" ");
  return escapeControls(`${time} ${level.padEnd(5)} ${String(o.msg ?? "")}${rest ? ` ${rest}` : ""}`);
}
