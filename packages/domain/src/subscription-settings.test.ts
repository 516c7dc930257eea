import { describe, expect, it } from "vitest";
import {
  applySettingsChange,
  callbackSpacingMs,
  DEFAULT_SETTINGS,
  generateSigningSecret,
  isDefaultSettings,
  parseSettingsChange,
  type SettingsChange,
  signingSecretsAt,
} from "./subscription-settings.ts";

const params = (p: Record<string, string>) => (name: string) => p[name];
const codeOf = (r: ReturnType<typeof parseSettingsChange> | ReturnType<typeof applySettingsChange>) => ("error" in r ? r.error.code : null);

function apply(change: SettingsChange, current = DEFAULT_SETTINGS, now = 1_000, secret = "whsec_bmV3") {
  const r = applySettingsChange(current, change, now, () => secret);
  if ("error" in r) throw r.error;
  return r;
}

describe("parseSettingsChange", () => {
  it("no setting is an empty change (the operation only reads)", () => {
    expect(parseSettingsChange(params({}))).toEqual({ change: {} });
  });

  it("reads numbers within their bounds, flags, and a blank value as the deployment's again", () => {
    const r = parseSettingsChange(
      params({
        maxRate: "2.5",
        retryMaxAttempts: "4",
        retryBaseMs: "",
        deliveryWindow: "8",
        paused: "TRUE",
        rotateSecret: "true",
        secretGraceMs: "60000",
      }),
    );
    expect(r).toEqual({
      change: { maxRate: 2.5, retryMaxAttempts: 4, retryBaseMs: null, deliveryWindow: 8, paused: true, rotateSecret: { graceMs: 60_000 } },
    });
  });

  it.each([
    ["maxRate", "0"],
    ["maxRate", "-1"],
    ["maxRate", "1e3"],
    ["retryMaxAttempts", "101"],
    ["retryMaxAttempts", "2.5"],
    ["retryBaseMs", "abc"],
    ["deliveryWindow", "257"],
    ["paused", "yes"],
    ["secretGraceMs", "-5"],
  ])("%s=%s answers 100513", (name, value) => {
    expect(codeOf(parseSettingsChange(params({ [name]: value })))).toBe(100513);
  });

  it("rotating and dropping the secret at once answers 100514", () => {
    expect(codeOf(parseSettingsChange(params({ rotateSecret: "true", dropSecret: "true" })))).toBe(100514);
  });

  it("rotateSecret=false and dropSecret=false change nothing", () => {
    expect(parseSettingsChange(params({ rotateSecret: "false", dropSecret: "false" }))).toEqual({ change: {} });
  });
});

describe("applySettingsChange", () => {
  it("a first retry delay above the cap answers 100514, also against a value kept from before", () => {
    expect(codeOf(applySettingsChange(DEFAULT_SETTINGS, { retryBaseMs: 500, retryMaxMs: 100 }, 0, () => ""))).toBe(100514);
    const kept = apply({ retryMaxMs: 100 }).settings;
    expect(codeOf(applySettingsChange(kept, { retryBaseMs: 500 }, 0, () => ""))).toBe(100514);
  });

  it("pause records when, resume clears it; pausing twice keeps the first time", () => {
    const paused = apply({ paused: true }, DEFAULT_SETTINGS, 5_000).settings;
    expect(paused).toMatchObject({ paused: true, pausedAt: 5_000 });
    expect(apply({ paused: true }, paused, 9_000).settings.pausedAt).toBe(5_000);
    expect(apply({ paused: false }, paused, 9_000).settings).toMatchObject({ paused: false, pausedAt: null });
  });

  it("the first secret is made alone; a rotation keeps the old one signing through the grace period", () => {
    const first = apply({ rotateSecret: { graceMs: 60_000 } }, DEFAULT_SETTINGS, 1_000, "whsec_b2xk");
    expect(first.secret).toBe("whsec_b2xk");
    expect(first.settings).toMatchObject({ secret: "whsec_b2xk", previousSecret: null, previousUntil: null });
    const second = apply({ rotateSecret: { graceMs: 60_000 } }, first.settings, 2_000, "whsec_bmV3");
    expect(second.settings).toMatchObject({ secret: "whsec_bmV3", previousSecret: "whsec_b2xk", previousUntil: 62_000 });
    expect(signingSecretsAt(second.settings, 61_999)).toEqual(["whsec_bmV3", "whsec_b2xk"]);
    expect(signingSecretsAt(second.settings, 62_000)).toEqual(["whsec_bmV3"]);
  });

  it("a change without a rotation shows no secret; dropping it goes back to the deployment's", () => {
    const own = apply({ rotateSecret: { graceMs: 0 } }).settings;
    const changed = apply({ maxRate: 3 }, own);
    expect(changed.secret).toBeNull();
    expect(changed.settings.secret).toBe(own.secret);
    const dropped = apply({ dropSecret: true }, own).settings;
    expect(signingSecretsAt(dropped, 0)).toBeNull();
    expect(isDefaultSettings(dropped)).toBe(true);
  });

  it("null puts a value back to the deployment's", () => {
    const set = apply({ maxRate: 3, deliveryWindow: 4 }).settings;
    expect(apply({ maxRate: null }, set).settings).toMatchObject({ maxRate: null, deliveryWindow: 4 });
  });
});

describe("the alert URL", () => {
  it("an http(s) URL sets it, a blank value clears it, anything else answers 100513", () => {
    expect(parseSettingsChange(params({ alertUrl: " https://ops.example/alerts " }))).toEqual({
      change: { alertUrl: "https://ops.example/alerts" },
    });
    expect(parseSettingsChange(params({ alertUrl: "" }))).toEqual({ change: { alertUrl: null } });
    for (const bad of ["ftp://ops.example/", "not a url", `https://ops.example/${"a".repeat(2048)}`])
      expect(codeOf(parseSettingsChange(params({ alertUrl: bad })))).toBe(100513);
  });

  it("is kept by other changes and is a setting of its own (not the deployment's)", () => {
    const set = apply({ alertUrl: "https://ops.example/a" }).settings;
    expect(isDefaultSettings(set)).toBe(false);
    expect(apply({ maxRate: 2 }, set).settings.alertUrl).toBe("https://ops.example/a");
    expect(isDefaultSettings(apply({ alertUrl: null }, set).settings)).toBe(true);
  });
});

describe("custom headers", () => {
  it("a JSON object sets them (names lower-cased), blank or {} clears them, anything else answers 100517", () => {
    expect(parseSettingsChange(params({ headers: '{"X-Token":"abc"}' }))).toEqual({ change: { headers: '{"x-token":"abc"}' } });
    expect(parseSettingsChange(params({ headers: " " }))).toEqual({ change: { headers: null } });
    expect(parseSettingsChange(params({ headers: "{}" }))).toEqual({ change: { headers: null } });
    for (const bad of ["[1]", '{"host":"x"}', '{"webhook-id":"x"}', "nope"])
      expect(codeOf(parseSettingsChange(params({ headers: bad })))).toBe(100517);
  });

  it("are kept by other changes and are a setting of their own", () => {
    const set = apply({ headers: '{"x-a":"1"}' }).settings;
    expect(isDefaultSettings(set)).toBe(false);
    expect(apply({ maxRate: 2 }, set).settings.headers).toBe('{"x-a":"1"}');
    expect(isDefaultSettings(apply({ headers: null }, set).settings)).toBe(true);
  });
});

describe("the body mode", () => {
  it("raw or envelope (blank: envelope), anything else answers 100518; raw is a setting of its own", () => {
    expect(parseSettingsChange(params({ bodyMode: " RAW " }))).toEqual({ change: { bodyMode: "raw" } });
    expect(parseSettingsChange(params({ bodyMode: "" }))).toEqual({ change: { bodyMode: "envelope" } });
    expect(codeOf(parseSettingsChange(params({ bodyMode: "json" })))).toBe(100518);
    const raw = apply({ bodyMode: "raw" }).settings;
    expect(isDefaultSettings(raw)).toBe(false);
    expect(apply({ maxRate: 1 }, raw).settings.bodyMode).toBe("raw");
    expect(isDefaultSettings(apply({ bodyMode: "envelope" }, raw).settings)).toBe(true);
  });
});

describe("the content filter setting", () => {
  it("a filter is kept as given, blank clears it, anything else answers 100519", () => {
    const text = '[{"path":"order.status","equals":"paid"}]';
    expect(parseSettingsChange(params({ filter: text }))).toEqual({ change: { filter: text } });
    expect(parseSettingsChange(params({ filter: "" }))).toEqual({ change: { filter: null } });
    expect(codeOf(parseSettingsChange(params({ filter: "status == paid" })))).toBe(100519);
    expect(isDefaultSettings(apply({ filter: text }).settings)).toBe(false);
  });
});

describe("secrets and spacing", () => {
  it("a generated secret is in the Standard Webhooks form", () => {
    expect(generateSigningSecret(Buffer.alloc(32, 1))).toBe(`whsec_${Buffer.alloc(32, 1).toString("base64")}`);
  });

  it("the spacing of a rate is the time between callback starts, none without a limit", () => {
    expect(callbackSpacingMs(null)).toBe(0);
    expect(callbackSpacingMs(4)).toBe(250);
    expect(callbackSpacingMs(0.5)).toBe(2_000);
  });
});
