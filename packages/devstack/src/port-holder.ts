import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { createServer } from "node:net";

/** A TCP port something else already listens on, and who, when /proc tells. */
export interface TakenPort {
  port: number;
  /** What we wanted the port for, e.g. `gateway-1`. */
  purpose: string;
  holder?: { pid: number; command: string };
}

/**
 * Socket inodes listening on `port` in the text of /proc/net/tcp or /proc/net/tcp6. Each line
 * after the header is `sl local_address rem_address st … inode …`, addresses as HEX_IP:HEX_PORT,
 * state 0A meaning LISTEN.
 */
export function listeningInodes(procNetTcp: string, port: number): string[] {
  const out: string[] = [];
  for (const line of procNetTcp.split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10) continue;
    const localPort = Number.parseInt(f[1]?.split(":")[1] ?? "", 16);
    if (localPort === port && f[3] === "0A" && f[9] && f[9] !== "0") out.push(f[9]);
  }
  return out;
}

function readOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return fallback;
  }
}

/** The process holding a listening socket on `port`, from /proc (Linux; other users' processes may stay hidden). */
export function portHolder(port: number): { pid: number; command: string } | undefined {
  const inodes = new Set([...listeningInodes(readOr("/proc/net/tcp", ""), port), ...listeningInodes(readOr("/proc/net/tcp6", ""), port)]);
  if (inodes.size === 0) return undefined;
  let pids: string[] = [];
  try {
    pids = readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const m = /^socket:\[(\d+)\]$/.exec(link);
      if (m && inodes.has(m[1] as string)) {
        const command = readOr(`/proc/${pid}/cmdline`, "").split("\0").filter(Boolean).join(" ");
        return { pid: Number(pid), command: command || "?" };
      }
    }
  }
  return undefined;
}

/** Whether `port` on `host` can be listened on right now (the probe listener is closed at once). */
function canListen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** The ports among `wanted` that something already listens on, each with its holder when found. */
export async function takenPorts(host: string, wanted: ReadonlyArray<{ port: number; purpose: string }>): Promise<TakenPort[]> {
  const out: TakenPort[] = [];
  for (const w of wanted) {
    if (await canListen(host, w.port)) continue;
    const holder = portHolder(w.port);
    out.push({ ...w, ...(holder ? { holder } : {}) });
  }
  return out;
}

/** One line per taken port, naming the port, what it was for and the process holding it. */
export function describeTakenPorts(taken: readonly TakenPort[]): string {
  return taken
    .map((t) => {
      const who = t.holder ? `pid ${t.holder.pid} (${t.holder.command.slice(0, 160)})` : "a process this user cannot see";
      return `port ${t.port} (for ${t.purpose}) is already in use by ${who}`;
    })
    .join("\n");
}
