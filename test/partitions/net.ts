import { execFileSync, spawnSync } from "node:child_process";

/**
 * The test bed's network: one Linux network namespace per host, each joined to one bridge (the
 * switch) by a veth pair. Faults are made on the switch side, as a pulled cable or a dead VM
 * makes them: a link set down loses every packet silently (no RST, no FIN), and an nftables rule
 * in a host's namespace drops what it sends to one peer (a one-way cut). The machine running the
 * bed is the client host: it sits on the bridge itself, at `.1`.
 */

/** One host of the bed. */
export interface Host {
  name: string;
  /** The network namespace playing the host. */
  netns: string;
  ip: string;
  /** The switch side of the host's cable. */
  switchPort: string;
}

function run(cmd: string, args: string[]): string {
  const res = spawnSync(cmd, args, { encoding: "utf8" });
  if (res.status !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} failed (exit ${res.status}): ${(res.stderr || res.stdout).trim()}`);
  }
  return res.stdout;
}

/** Like `run`, for cleanup: what is already gone is no failure. */
function tryRun(cmd: string, args: string[]): void {
  spawnSync(cmd, args, { encoding: "utf8" });
}

export class BedNetwork {
  readonly hosts = new Map<string, Host>();
  /** The client host's (this machine's) address on the bed. */
  readonly clientIp: string;
  private readonly bridge: string;
  private readonly prefix: string;
  private readonly subnet: string;

  /**
   * @param prefix names every namespace (`<prefix>-<host>`), interface and table made, so that a
   *   bed left behind by a killed run is found and removed by the next one.
   * @param subnet the first three octets of the bed's /24, e.g. `10.77.0`.
   */
  constructor(prefix: string, subnet: string) {
    this.prefix = prefix;
    this.subnet = subnet;
    this.bridge = `${prefix}br`;
    this.clientIp = `${subnet}.1`;
  }

  /** Checks what the bed needs (root, `ip`, `nft`) and says how to get it. */
  static requirePrerequisites(): void {
    if (process.getuid?.() !== 0) throw new Error("the partition test bed makes network namespaces: run it as root");
    for (const tool of ["ip", "nft", "setpriv"]) {
      if (spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0) {
        throw new Error(`the partition test bed needs \`${tool}\`: apt-get install -y iproute2 nftables util-linux`);
      }
    }
  }

  /** Removes every namespace and the bridge of this prefix, with the processes in them (a previous run's leftovers too). */
  destroy(): void {
    const names = run("ip", ["-o", "netns", "list"])
      .split("\n")
      .map((l) => l.split(" ")[0] ?? "")
      .filter((n) => n.startsWith(`${this.prefix}-`));
    for (const ns of names) {
      const pids = spawnSync("ip", ["netns", "pids", ns], { encoding: "utf8" }).stdout.split("\n").filter(Boolean);
      for (const pid of pids) tryRun("kill", ["-9", pid]);
      tryRun("ip", ["netns", "del", ns]);
    }
    // A namespace outlives its deletion while a process still holds it, and with it the veth pair;
    // deleting the switch side removes the pair at once.
    const ports = run("ip", ["-o", "link", "show"])
      .split("\n")
      .map((l) => /^\d+: ([^:@]+)/.exec(l)?.[1] ?? "")
      .filter((n) => n.startsWith(`${this.prefix}s`));
    for (const port of ports) tryRun("ip", ["link", "del", port]);
    tryRun("ip", ["link", "del", this.bridge]);
    this.hosts.clear();
  }

  /** Makes the switch and one host per name, addresses `.10` upwards in the order given. */
  create(names: readonly string[]): void {
    this.destroy();
    run("ip", ["link", "add", this.bridge, "type", "bridge"]);
    run("ip", ["addr", "add", `${this.clientIp}/24`, "dev", this.bridge]);
    run("ip", ["link", "set", this.bridge, "up"]);
    names.forEach((name, i) => {
      const netns = `${this.prefix}-${name}`;
      const ip = `${this.subnet}.${10 + i}`;
      const switchPort = `${this.prefix}s${i}`;
      run("ip", ["netns", "add", netns]);
      // The host's end is made inside its namespace, as eth0: no name of it exists on this machine.
      run("ip", ["link", "add", switchPort, "type", "veth", "peer", "name", "eth0", "netns", netns]);
      run("ip", ["link", "set", switchPort, "master", this.bridge]);
      run("ip", ["link", "set", switchPort, "up"]);
      const inNs = (args: string[]) => run("ip", ["netns", "exec", netns, "ip", ...args]);
      inNs(["link", "set", "lo", "up"]);
      inNs(["addr", "add", `${ip}/24`, "dev", "eth0"]);
      inNs(["link", "set", "eth0", "up"]);
      this.hosts.set(name, { name, netns, ip, switchPort });
    });
  }

  host(name: string): Host {
    const h = this.hosts.get(name);
    if (!h) throw new Error(`the bed has no host ${name}`);
    return h;
  }

  /** Pulls the host's cable: every packet to and from it is lost, silently. */
  linkDown(name: string): void {
    run("ip", ["link", "set", this.host(name).switchPort, "down"]);
  }

  linkUp(name: string): void {
    run("ip", ["link", "set", this.host(name).switchPort, "up"]);
  }

  /** Drops everything `from` sends to `to` (one way: `to`'s packets still arrive). */
  cutOneWay(from: string, to: string): void {
    const { netns } = this.host(from);
    const script = [
      "table inet bedcut {",
      "  chain out {",
      "    type filter hook output priority 0; policy accept;",
      `    ip daddr ${this.host(to).ip} drop`,
      "  }",
      "}",
    ].join("\n");
    execFileSync("ip", ["netns", "exec", netns, "nft", "-f", "-"], { input: script });
  }

  /** Removes every one-way cut made in `from`. */
  healCuts(from: string): void {
    tryRun("ip", ["netns", "exec", this.host(from).netns, "nft", "delete", "table", "inet", "bedcut"]);
  }
}
