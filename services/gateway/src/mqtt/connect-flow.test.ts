import { describe, expect, it } from "vitest";
import { mayTakeSession } from "./connect-flow.ts";

describe("mayTakeSession", () => {
  const stored = (owner?: string) => ({ v: 1 as const, ...(owner === undefined ? {} : { owner }), subscriptions: [] });

  it("lets only the owner resume or discard a stored session: its key, or in open mode its address", () => {
    expect(mayTakeSession(stored("key:k1"), "key:k1")).toBe(true);
    expect(mayTakeSession(stored("key:k1"), "key:k2")).toBe(false);
    expect(mayTakeSession(stored("127.0.0.1"), "127.0.0.1")).toBe(true);
    expect(mayTakeSession(stored("127.0.0.1"), "127.0.0.2")).toBe(false);
    expect(mayTakeSession(stored("127.0.0.1"), "key:127.0.0.1")).toBe(false);
  });

  it("takes no stored session, or one stored before owners were kept, as anybody's", () => {
    expect(mayTakeSession(null, "key:k2")).toBe(true);
    expect(mayTakeSession(stored(), "10.0.0.2")).toBe(true);
  });
});
