import { describe, expect, it } from "vitest";
import { HIDDEN_URL, redactUrl } from "./redact-url.ts";

describe("redactUrl (defect 7: one redaction for every connection URL)", () => {
  it("hides the user-part password and keeps the rest", () => {
    expect(redactUrl("postgres://evb:pw-1@db:5432/evb?sslmode=require")).toBe("postgres://evb:***@db:5432/evb?sslmode=require");
    expect(redactUrl("redis://127.0.0.1:6379/0")).toBe("redis://127.0.0.1:6379/0");
  });

  it("hides credential query parameters: password, sslpassword, token", () => {
    const shown = redactUrl("postgres://evb@127.0.0.1:1/test?password=QueryPw55xx&sslpassword=S2&token=T3&application_name=evb");
    for (const secret of ["QueryPw55xx", "S2", "T3"]) expect(shown).not.toContain(secret);
    expect(shown).toContain("application_name=evb");
  });

  it("hides a URL entirely when it does not parse, or when an @ spills past the host", () => {
    expect(redactUrl("postgres://evb:Hash#Pw99@127.0.0.1:1/test")).toBe(HIDDEN_URL);
    expect(redactUrl("postgres://evb:12/pw@db/test")).toBe(HIDDEN_URL);
    expect(redactUrl("postgres://evb:12#pw@db/test")).toBe(HIDDEN_URL);
    expect(redactUrl("not a url at all")).toBe(HIDDEN_URL);
  });

  // Issue 18, F7: admin/deadLetters showed callback URLs verbatim, user:password and ?token=/?sig= included.
  it("hides a callback URL's user and the signature, session and function-key parameters", () => {
    expect(redactUrl("https://hook:pw@example.com/in?token=T1&sig=S1&code=C1&x=1", { user: true })).toBe(
      "https://***:***@example.com/in?token=***&sig=***&code=***&x=1",
    );
    expect(redactUrl("https://TOKEN9@example.com/in", { user: true })).toBe("https://***@example.com/in");
    expect(redactUrl("https://example.com/in?signature=abc&session_id=s&jwt=j&hmac=h")).not.toMatch(/abc|=s&|=j&|=h$/);
  });
});
