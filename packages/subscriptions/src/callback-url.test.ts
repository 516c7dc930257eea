import { describe, expect, it } from "vitest";
import { MAX_CALLBACK_URL_LENGTH, parseCallbackUrl } from "./callback-url.ts";

describe("callback URL", () => {
  it("accepts absolute http and https URLs, with default ports and bracketed IPv6 hosts", () => {
    expect(parseCallbackUrl("http://example.com/cb")).toMatchObject({ protocol: "http:", host: "example.com", port: 80 });
    expect(parseCallbackUrl("https://example.com/cb?x=1")).toMatchObject({ protocol: "https:", port: 443 });
    expect(parseCallbackUrl(" http://[::1]:8081/a ")).toMatchObject({ host: "::1", port: 8081 });
  });

  it("refuses other schemes, relative and unparseable URLs", () => {
    for (const bad of [
      "ftp://example.com/x",
      "file:///etc/passwd",
      "gopher://h/",
      "javascript:alert(1)",
      "/cb",
      "example.com/cb",
      "http://",
      "not a url",
      "",
    ]) {
      expect(parseCallbackUrl(bad), bad).toBeNull();
    }
  });

  it("callback URLs have no length limit: a URL over 2048 characters is refused", () => {
    const base = "http://example.com/";
    expect(parseCallbackUrl(base + "a".repeat(MAX_CALLBACK_URL_LENGTH - base.length))).not.toBeNull();
    expect(parseCallbackUrl(base + "a".repeat(MAX_CALLBACK_URL_LENGTH - base.length + 1))).toBeNull();
    expect(parseCallbackUrl(base + "a".repeat(900 * 1024))).toBeNull();
  });
});
