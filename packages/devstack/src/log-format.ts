const LEVELS: Record<number, string> = { 10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR", 60: "FATAL" };
const SKIP = new Set(["level", "time", "pid", "hostname", "service", "msg"]);

/** Turns one pino JSON line into `12:00:01 INFO message key=value …`; other lines pass through. */
export function formatLogLine(line: string): string {
  if (!line.startsWith("{")) return line;
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const time = typeof o.time === "number" ? new Date(o.time).toTimeString().slice(0, 8) : "";
  const level = LEVELS[o.level as number] ?? String(o.level ?? "");
  const rest = Object.entries(o)
    .filter(([k]) => !SKIP.has(k))
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(" ");
  return `${time} ${level.padEnd(5)} ${String(o.msg ?? "")}${rest ? ` ${rest}` : ""}`;
}
