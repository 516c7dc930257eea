import { describe, expect, it } from "vitest";
import { AddressPolicy, parseCidrList } from "@evb/domain";
import type { HostLookup } from "@evb/subscriptions";
import { subscribeSettings } from "./subscribe-operation.ts";

// subscribe's optional settings as the gateway reads them: alertUrl among them, checked as
// admin/subscriptionSettings checks it (100513 for no http(s) URL, 100502 for a refused host).

const lookup: HostLookup = async (host) => {
  if (host === "alerts.example") return [{ address: "127.0.0.5", family: 4 }];
  if (host === "inside.example") return [{ address: "10.0.0.1", family: 4 }];
  throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
};
const deps = { policy: new AddressPolicy(parseCidrList("127.0.0.0/8")), lookup };
const read = (params: Record<string, string>) => subscribeSettings((name) => params[name], deps);
const code = (p: Promise<unknown>) =>
  p.then(
    () => "resolved",
    (e: { code?: number }) => e.code,
  );

describe("subscribe's settings", () => {
  it("take an alert URL beside the others; blank means none, absent changes nothing", async () => {
    expect(await read({ alertUrl: "http://alerts.example:8080/evb", maxRate: "5" })).toEqual({
      alertUrl: "http://alerts.example:8080/evb",
      maxRate: 5,
    });
    expect(await read({ alertUrl: " https://127.0.0.1/a " })).toEqual({ alertUrl: "https://127.0.0.1/a" });
    expect(await read({ alertUrl: "" })).toEqual({ alertUrl: null });
    expect(await read({ alertUrl: "  " })).toEqual({ alertUrl: null });
    expect(await read({})).toEqual({});
  });

  it("refuse an alert URL that is no http(s) URL with 100513, and a host the callback policy refuses with 100502", async () => {
    expect(await code(read({ alertUrl: "ftp://alerts.example/x" }))).toBe(100513);
    expect(await code(read({ alertUrl: "not a url" }))).toBe(100513);
    expect(await code(read({ alertUrl: `http://alerts.example/${"a".repeat(2100)}` }))).toBe(100513);
    expect(await code(read({ alertUrl: "http://inside.example/alerts" }))).toBe(100502);
    expect(await code(read({ alertUrl: "http://169.254.169.254/latest" }))).toBe(100502);
    expect(await code(read({ alertUrl: "http://nowhere.example/alerts" }))).toBe(100502);
  });

  it("ignore admin/subscriptionSettings' secret actions: subscribe answers the id only", async () => {
    expect(await read({ rotateSecret: "true", dropSecret: "true", secretGraceMs: "5" })).toEqual({});
  });
});
