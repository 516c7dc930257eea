import { describe, expect, it } from "vitest";
import { shownCallbackUrl } from "./shown-callback-url.ts";

const URL_WITH_SECRETS = "https://u:p@hooks.example.com/in?token=T&x=1";
const REDACTED = "https://***:***@hooks.example.com/in?token=***&x=1";

describe("shownCallbackUrl (issue 18, F7)", () => {
  it("shows the whole URL only to the API key that owns the subscription", () => {
    expect(shownCallbackUrl(URL_WITH_SECRETS, "key:k1", { address: "10.0.0.1", keyId: "k1" })).toBe(URL_WITH_SECRETS);
  });

  it("redacts it for another key, and for any caller when keys are off (an address proves nothing)", () => {
    expect(shownCallbackUrl(URL_WITH_SECRETS, "key:k1", { address: "10.0.0.1", keyId: "k2" })).toBe(REDACTED);
    expect(shownCallbackUrl(URL_WITH_SECRETS, "10.0.0.1", { address: "10.0.0.1", keyId: null })).toBe(REDACTED);
  });
});
