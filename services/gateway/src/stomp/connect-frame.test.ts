import { describe, expect, it } from "vitest";
import { heartBeatReply, loginAuthorizations, negotiatedVersion } from "./connect-frame.ts";

describe("heartBeatReply", () => {
  it("answers the Java client's 30,0 exactly as the original: 0,30000 and no server beats", () => {
    expect(heartBeatReply("30,0", 30_000)).toEqual({ header: "0,30000", sendEveryMs: 0 });
  });

  it("offers server beats only when the client asks, at the slower of the two", () => {
    expect(heartBeatReply("10000,10000", 30_000)).toEqual({ header: "30000,30000", sendEveryMs: 30_000 });
    expect(heartBeatReply("0,60000", 30_000)).toEqual({ header: "60000,30000", sendEveryMs: 60_000 });
  });

  it("treats a missing or malformed header as 0,0", () => {
    for (const raw of [undefined, "", "x", "1,2,3", "-1,5"]) expect(heartBeatReply(raw, 30_000).sendEveryMs, String(raw)).toBe(0);
  });
});

describe("negotiatedVersion", () => {
  it("picks the highest common version, and 1.1 (the original's answer) when none is named", () => {
    expect(negotiatedVersion("1.1")).toBe("1.1");
    expect(negotiatedVersion("1.0,1.1,1.2")).toBe("1.2");
    expect(negotiatedVersion("1.0")).toBe("1.0");
    expect(negotiatedVersion(undefined)).toBe("1.1");
    expect(negotiatedVersion("2.0")).toBe("1.1");
  });
});

describe("loginAuthorizations", () => {
  it("tries Basic login:passcode first, then the passcode as an API key", () => {
    expect(loginAuthorizations("ops", "s3cret")).toEqual([`Basic ${Buffer.from("ops:s3cret").toString("base64")}`, "Bearer s3cret"]);
    expect(loginAuthorizations("", "evb_key")).toEqual(["Bearer evb_key"]);
    expect(loginAuthorizations("", "")).toEqual([]);
    expect(loginAuthorizations("u", "has space")).toEqual([`Basic ${Buffer.from("u:has space").toString("base64")}`]);
  });
});
