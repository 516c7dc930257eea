import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/** The secrets a local stack runs with, and where each came from. */
export interface DevSecrets {
  /** WEBHOOK_SECRETS for the notifiers: the caller's, else the development secret. */
  webhookSecrets: string;
  /** The development signing secret when it is the one in use (printed in the ready line), else null. */
  shownWebhookSecret: string | null;
  /** SECRETS_KEY for every service: the caller's, else one derived from where the ledger lives. */
  secretsKey: string;
}

/**
 * The signing secret and the at-rest key of `npm start`, so that its callbacks are signed (the
 * README's `evb listen --secret` verifies them) and its services do not each warn that secrets
 * are stored readable. A value the caller set wins. The development signing secret is random,
 * kept in `file` (mode 0600) so a restart signs with the same one; SECRETS_KEY is derived from the
 * ledger's address and schema, so that a stack whose cache folder was wiped still opens the
 * secrets its ledger sealed. Neither is a secret worth the name: both are for a stack on this
 * machine only, and docs/configuration.md says to set real ones anywhere else.
 */
export function devSecrets(
  file: string,
  env: { WEBHOOK_SECRETS?: string | undefined; SECRETS_KEY?: string | undefined },
  ledger: { databaseUrl: string; schema: string },
): DevSecrets {
  const secretsKey = env.SECRETS_KEY?.trim()
    ? env.SECRETS_KEY
    : createHash("sha256").update(`evb development SECRETS_KEY\n${ledger.databaseUrl}\n${ledger.schema}`).digest("hex");
  if (env.WEBHOOK_SECRETS?.trim()) return { webhookSecrets: env.WEBHOOK_SECRETS, shownWebhookSecret: null, secretsKey };
  const secret = storedSecret(file) ?? newSecret(file);
  return { webhookSecrets: secret, shownWebhookSecret: secret, secretsKey };
}

const WHSEC = /^whsec_[A-Za-z0-9+/]{32}$/;

function storedSecret(file: string): string | null {
  if (!existsSync(file)) return null;
  const s = readFileSync(file, "utf8").trim();
  return WHSEC.test(s) ? s : null;
}

function newSecret(file: string): string {
  const s = `whsec_${randomBytes(24).toString("base64")}`;
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${s}\n`, { mode: 0o600 });
  return s;
}
