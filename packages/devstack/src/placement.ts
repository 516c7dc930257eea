/**
 * Where a process runs: the address it listens on and, on a multi-host test bed, the Linux
 * network namespace that plays its host (`ip netns exec`). The default is this machine's
 * loopback, as `npm start` and the tests use.
 */
export interface Placement {
  /** Address the process listens on and is reached at. */
  host: string;
  /** Network namespace to run in (root only); unset: the caller's own network. */
  netns?: string | undefined;
}

export const LOOPBACK: Placement = { host: "127.0.0.1" };

/**
 * The command line that runs `command args` in `netns` (and as `uid:gid` there, since `ip netns
 * exec` needs root and a uid given to spawn would take that away first). Without a namespace the
 * command is unchanged and the ids are left to spawn.
 */
export function placedCommand(
  command: string,
  args: readonly string[],
  netns: string | undefined,
  ids: { uid?: number | undefined; gid?: number | undefined },
): { command: string; args: string[]; spawnIds: { uid?: number; gid?: number } } {
  const spawnIds = { ...(ids.uid === undefined ? {} : { uid: ids.uid }), ...(ids.gid === undefined ? {} : { gid: ids.gid }) };
  if (!netns) return { command, args: [...args], spawnIds };
  const drop = ids.uid === undefined ? [] : ["setpriv", `--reuid=${ids.uid}`, `--regid=${ids.gid ?? ids.uid}`, "--clear-groups", "--"];
  return { command: "ip", args: ["netns", "exec", netns, ...drop, command, ...args], spawnIds: {} };
}
