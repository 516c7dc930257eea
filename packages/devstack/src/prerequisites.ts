import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";

/** Raised when a tool the local stack needs is not installed; the message says how to install it. */
export class MissingPrerequisiteError extends Error {
  constructor(what: string, fix: string) {
    super(`${what} is not installed. ${fix}`);
    this.name = "MissingPrerequisiteError";
  }
}

function onPath(cmd: string): boolean {
  const probe = spawnSync("sh", ["-c", `command -v ${cmd}`], { encoding: "utf8" });
  return probe.status === 0 && probe.stdout.trim() !== "";
}

/** Java 17+ and Maven run the Kafka broker from its Maven Central jars. */
export function requireJavaAndMaven(): void {
  if (!onPath("java")) {
    throw new MissingPrerequisiteError(
      "Java (17 or newer, for the Kafka broker)",
      "Install it with `apt-get install -y openjdk-17-jre-headless`, or set KAFKA_BROKERS to a running Kafka cluster.",
    );
  }
  if (!onPath("mvn")) {
    throw new MissingPrerequisiteError(
      "Maven (fetches the Kafka broker jars from Maven Central)",
      "Install it with `apt-get install -y maven`, or set KAFKA_BROKERS to a running Kafka cluster.",
    );
  }
}

/** Finds `initdb`/`postgres`: on PATH, or in Debian's versioned folder (which is not on PATH). */
export function findPostgresBin(): string {
  if (onPath("postgres") && onPath("initdb")) return "";
  for (const v of ["17", "16", "15", "14"]) {
    const dir = `/usr/lib/postgresql/${v}/bin`;
    if (existsSync(join(dir, "postgres")) && existsSync(join(dir, "initdb"))) return dir;
  }
  throw new MissingPrerequisiteError(
    "PostgreSQL server binaries (initdb, postgres)",
    "Install them with `apt-get install -y postgresql`, or set DATABASE_URL to a running PostgreSQL 15+ server.",
  );
}

export function requireRedisServer(): void {
  if (!onPath("redis-server")) {
    throw new MissingPrerequisiteError(
      "redis-server",
      "Install it with `apt-get install -y redis-server`, or set REDIS_URL to a running Redis 7 server.",
    );
  }
}
