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

  it("defect 9: the cap is on the stored href, not only the URL as sent (percent-encoding grows it)", () => {
    const base = "http://example.com/";
    const wide = base + "世".repeat(2043 - base.length);
    expect(wide.length).toBeLessThanOrEqual(MAX_CALLBACK_URL_LENGTH);
    expect(new URL(wide).href.length).toBeGreaterThan(MAX_CALLBACK_URL_LENGTH);
    expect(parseCallbackUrl(wide)).toBeNull();
    // Up to the cap once encoded it is taken: 世 is 9 characters in the href.
    const fits = base + "世".repeat(Math.floor((MAX_CALLBACK_URL_LENGTH - base.length) / 9));
    expect(parseCallbackUrl(fits)?.url.href.length).toBeLessThanOrEqual(MAX_CALLBACK_URL_LENGTH);
  });
});
