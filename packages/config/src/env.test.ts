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

  const messageFor = (url: string) => {
    try {
      parseEnv("svc", Schema, { DATABASE_URL: url, API_BASIC_AUTH: "a:b", WEBHOOK_SECRETS: "whsec_x", PORT: "x" });
    } catch (err) {
      return (err as Error).message;
    }
    return "";
  };

  it("defect 7: a password in the query (password=, sslpassword=) is hidden", () => {
    const message = messageFor("mysql://evb@127.0.0.1:1/test?password=QueryPw55xx&sslpassword=SslPw66yy&sslmode=require");
    expect(message).toContain("DATABASE_URL (");
    expect(message).toContain("sslmode=require");
    for (const secret of ["QueryPw55xx", "SslPw66yy"]) expect(message).not.toContain(secret);
  });

  it("defect 7: a URL that does not parse is hidden entirely (its password may be anywhere)", () => {
    const message = messageFor("postgres://evb:Hash#Pw99@127.0.0.1:1/test");
    expect(message).toContain("DATABASE_URL (value hidden: not a URL that parses)");
    expect(message).not.toContain("Pw99");
    expect(message).not.toContain("Hash");
  });
});
