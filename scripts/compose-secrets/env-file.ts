import { randomBytes } from "node:crypto";

type Random = (bytes: number) => Buffer;

/** The variables docker-compose.yml refuses to start without, and how each is made. */
const GENERATED = {
  // A Standard Webhooks secret of 24 random bytes, as `npm start`'s development secret.
  WEBHOOK_SECRETS: (random: Random) => `whsec_${random(24).toString("base64")}`,
  // 32 bytes as hex: one of SECRETS_KEY's accepted forms, with nothing a shell or .env would quote.
  SECRETS_KEY: (random: Random) => random(32).toString("hex"),
};

const ASSIGNMENT = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/;
const EMPTY = /^(|""|'')$/;

/**
 * The `.env` text with every missing secret added (a line that sets one to nothing is replaced).
 * A value already there is kept, never replaced: a new SECRETS_KEY would make the secrets sealed
 * with the old one unreadable, and a new signing secret would fail every receiver's verification.
 */
export function withComposeSecrets(existing: string, random: Random = randomBytes): { text: string; added: string[] } {
  const lines = existing === "" ? [] : existing.replace(/\r?\n$/, "").split(/\r?\n/);
  const isSet = (name: string) => lines.some((l) => ASSIGNMENT.exec(l)?.[1] === name && !EMPTY.test(ASSIGNMENT.exec(l)?.[2] ?? ""));
  const added = (Object.keys(GENERATED) as Array<keyof typeof GENERATED>).filter((name) => !isSet(name));
  if (added.length === 0) return { text: existing, added };
  const kept = lines.filter((l) => !added.includes(ASSIGNMENT.exec(l)?.[1] as keyof typeof GENERATED));
  const text = [...kept, ...added.map((name) => `${name}=${GENERATED[name](random)}`)].join("\n");
  return { text: `${text}\n`, added };
}
