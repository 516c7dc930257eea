import { readFileSync } from "node:fs";
import { join } from "node:path";
import { withComposeSecrets } from "../../scripts/compose-secrets/env-file.ts";
import { type ComposeDoc, parseCompose } from "./compose-model.ts";

export const ROOT = join(import.meta.dirname, "..", "..");
export const COMPOSE_TEXT = readFileSync(join(ROOT, "docker-compose.yml"), "utf8");

/** What `.env` holds after `npm run compose-secrets`, made by the command's own code (fixed bytes). */
export const SECRETS_ENV: Record<string, string> = Object.fromEntries(
  withComposeSecrets("", (n) => Buffer.alloc(n, 7))
    .text.trim()
    .split("\n")
    .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
);

/** docker-compose.yml as `docker compose` reads it with the generated `.env` and nothing else set. */
export function readCompose(env: Record<string, string> = SECRETS_ENV): ComposeDoc {
  return parseCompose(COMPOSE_TEXT, env);
}
