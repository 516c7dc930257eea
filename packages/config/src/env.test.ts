import { z } from "zod";
import { describe, expect, it } from "vitest";
import { parseEnv, urlVar } from "./env.ts";

const Schema = z.object({
  DATABASE_URL: urlVar(["postgres:"], undefined, "a postgres:// URL"),
  API_BASIC_AUTH: z
    .string()
    .regex(/^[^:]+:.+$/)
    .describe("user:password"),
  WEBHOOK_SECRETS: z
    .string()
    .regex(/^whsec_/)
    .describe("whsec_ secrets"),
  PORT: z.coerce.number().int().describe("a port"),
});

describe("start-up errors", () => {
  it("never show a secret variable's value, nor a URL's password", () => {
    let message = "";
    try {
      parseEnv("svc", Schema, {
        DATABASE_URL: "mysql://evb:db-pass-123@db:5432/evb",
        API_BASIC_AUTH: "basic-pass-456",
        WEBHOOK_SECRETS: "hook-secret-789",
        PORT: "abc",
      });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('PORT ("abc")');
    expect(message).toContain('DATABASE_URL ("mysql://evb:***@db:5432/evb")');
    expect(message).toContain("API_BASIC_AUTH (value hidden)");
    for (const secret of ["db-pass-123", "basic-pass-456", "hook-secret-789"]) expect(message).not.toContain(secret);
  });
});
