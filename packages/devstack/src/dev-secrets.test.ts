import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { devSecrets } from "./dev-secrets.ts";

describe("devSecrets", () => {
  const dir = mkdtempSync(join(tmpdir(), "evb-dev-secrets-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const ledger = { databaseUrl: "postgres://postgres@127.0.0.1:5432/test", schema: "public" };

  it("makes a signing secret once, keeps it in the file (0600) and signs with it again after a restart", () => {
    const file = join(dir, "a", "webhook-secret");
    const first = devSecrets(file, {}, ledger);
    expect(first.webhookSecrets).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(first.shownWebhookSecret).toBe(first.webhookSecrets);
    expect(readFileSync(file, "utf8").trim()).toBe(first.webhookSecrets);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(devSecrets(file, {}, ledger).webhookSecrets).toBe(first.webhookSecrets);
  });

  it("replaces a file that holds no secret of its shape", () => {
    const file = join(dir, "garbled");
    writeFileSync(file, "not a secret\n");
    expect(devSecrets(file, {}, ledger).webhookSecrets).toMatch(/^whsec_/);
  });

  it("uses the caller's values, and shows no secret of theirs", () => {
    const file = join(dir, "b", "webhook-secret");
    const s = devSecrets(file, { WEBHOOK_SECRETS: "whsec_mine", SECRETS_KEY: "ab".repeat(32) }, ledger);
    expect(s).toEqual({ webhookSecrets: "whsec_mine", shownWebhookSecret: null, secretsKey: "ab".repeat(32) });
  });

  it("derives SECRETS_KEY from the ledger's address and schema: the same after a wiped cache, another for another ledger", () => {
    const a = devSecrets(join(dir, "c1"), {}, ledger).secretsKey;
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(devSecrets(join(dir, "c2"), {}, ledger).secretsKey).toBe(a);
    expect(devSecrets(join(dir, "c3"), {}, { ...ledger, schema: "other" }).secretsKey).not.toBe(a);
  });
});
