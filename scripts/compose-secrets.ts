// `npm run compose-secrets`: writes the secrets docker-compose.yml requires into `.env` (read by
// `docker compose` from the project folder, never committed, kept out of the image build), so a
// compose deployment signs its callbacks and seals the subscriptions' secrets from its first start.
// Run it again at any time: it adds what is missing and never replaces a value already there.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withComposeSecrets } from "./compose-secrets/env-file.ts";

// The folder docker compose reads .env from: the checkout, where `npm run` runs scripts.
const file = join(process.cwd(), ".env");
const { text, added } = withComposeSecrets(existsSync(file) ? readFileSync(file, "utf8") : "");
if (added.length === 0) {
  console.log(`${file} already sets WEBHOOK_SECRETS and SECRETS_KEY; left as it is`);
} else {
  writeFileSync(file, text, { mode: 0o600 });
  console.log(`${file}: added ${added.join(" and ")}; keep the file, docker compose reads it at every start`);
  if (added.includes("WEBHOOK_SECRETS")) console.log("Receivers verify the callbacks with the WEBHOOK_SECRETS value in it.");
}
