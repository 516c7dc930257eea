import { describe, expect, it } from "vitest";
import { settingsParams } from "./variant-client.ts";

describe("settingsParams", () => {
  it("sends each setting given as a parameter, null blank (the broker's value again), nothing for an absent one", () => {
    expect(settingsParams({ maxRate: 2.5, deliveryWindow: null, paused: false })).toEqual({
      maxRate: "2.5",
      deliveryWindow: "",
      paused: "false",
    });
    expect(settingsParams()).toEqual({});
    expect(settingsParams({ alertUrl: "https://ops.example/alerts" })).toEqual({ alertUrl: "https://ops.example/alerts" });
    expect(settingsParams({ alertUrl: null })).toEqual({ alertUrl: "" });
  });
});
