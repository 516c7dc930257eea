import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import {
  openSecret,
  parseSecretsKey,
  readSecret,
  SecretsKeyError,
  sealSecret,
  secretsAtRest,
  storedSecret,
  useSecretsKey,
} from "./secret-box.ts";

const SECRET = `whsec_${randomBytes(32).toString("base64")}`;
const KEY = randomBytes(32);

describe("secret box (AES-256-GCM, v1)", () => {
  it("round trip: a sealed secret is not the secret, differs each time, and opens to it", () => {
    const a = sealSecret(SECRET, KEY);
    const b = sealSecret(SECRET, KEY);
    expect(a).toMatch(/^v1:[A-Za-z0-9+/]+=*$/);
    expect(a).not.toContain(SECRET.slice(6));
    expect(a).not.toBe(b);
    expect(openSecret(a, KEY)).toBe(SECRET);
    expect(openSecret(b, KEY)).toBe(SECRET);
  });

  it("tamper detection: any changed byte of iv, tag or ciphertext fails to open", () => {
    const raw = Buffer.from(sealSecret(SECRET, KEY).slice(3), "base64");
    for (const at of [0, 12, 28, raw.length - 1]) {
      const bad = Buffer.from(raw);
      bad[at] = (bad[at] as number) ^ 1;
      expect(() => openSecret(`v1:${bad.toString("base64")}`, KEY), `byte ${at}`).toThrow(SecretsKeyError);
    }
    expect(() => openSecret("v1:AAAA", KEY)).toThrow(/damaged/);
  });

  it("wrong key or no key: an error naming SECRETS_KEY, never the stored value", () => {
    const sealed = sealSecret(SECRET, KEY);
    expect(() => openSecret(sealed, randomBytes(32))).toThrow(/SECRETS_KEY/);
    expect(() => openSecret(sealed, null)).toThrow(/SECRETS_KEY is not set/);
  });

  it("plain passthrough: a value stored before the key was set reads as it is, with or without a key", () => {
    expect(openSecret(SECRET, KEY)).toBe(SECRET);
    expect(openSecret(SECRET, null)).toBe(SECRET);
  });

  it("parses SECRETS_KEY as 64 hex digits or base64 of 32 bytes; empty is none; anything else throws", () => {
    expect(parseSecretsKey("")).toBeNull();
    expect(parseSecretsKey(KEY.toString("hex"))).toEqual(KEY);
    expect(parseSecretsKey(KEY.toString("base64"))).toEqual(KEY);
    expect(parseSecretsKey(` ${KEY.toString("base64").replace(/=$/, "")} `)).toEqual(KEY);
    for (const bad of ["abc", randomBytes(16).toString("hex"), randomBytes(31).toString("base64"), "z".repeat(64)]) {
      expect(() => parseSecretsKey(bad), bad).toThrow(/32 bytes/);
    }
  });
});

describe("the process's key", () => {
  afterEach(() => useSecretsKey(null));

  it("without SECRETS_KEY stores secrets as they are; with it, sealed (a sealed value kept), and reads both", () => {
    expect(storedSecret(SECRET)).toBe(SECRET);
    expect(storedSecret(null)).toBeNull();
    useSecretsKey(KEY);
    const stored = storedSecret(SECRET) as string;
    expect(stored.startsWith("v1:")).toBe(true);
    expect(storedSecret(stored)).toBe(stored);
    expect(readSecret(stored, "s1")).toBe(SECRET);
    expect(readSecret(SECRET, "s1")).toBe(SECRET);
    useSecretsKey(randomBytes(32));
    expect(() => readSecret(stored, "s1")).toThrow(/subscription s1: .*SECRETS_KEY/);
  });

  it("a start without SECRETS_KEY warns that secrets are stored readable; with one, it seals", () => {
    const warned: string[] = [];
    const logger = { warn: (_o: object, msg: string) => void warned.push(msg) };
    secretsAtRest(undefined, logger);
    expect(warned).toEqual([expect.stringMatching(/SECRETS_KEY is not set: .* stored readable/)]);
    secretsAtRest(KEY.toString("hex"), logger);
    expect(warned).toHaveLength(1);
    expect(storedSecret(SECRET)).toMatch(/^v1:/);
  });
});
