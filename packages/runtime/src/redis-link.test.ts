import { describe, expect, it } from "vitest";
import { redisLinkProblem } from "./redis-link.ts";

const err = (code: string, message: string) => Object.assign(new Error(message), { code });

describe("redisLinkProblem", () => {
  it("an untrusted certificate points at REDIS_TLS_CA_FILE, the password never shown", () => {
    const p = redisLinkProblem(
      err("SELF_SIGNED_CERT_IN_CHAIN", "self-signed certificate in certificate chain"),
      "rediss://u:s3cret@r:6380",
      true,
    );
    expect(p).toMatch(/^Redis at rediss:\/\/u:\*\*\*@r:6380 sent a certificate this client does not accept \(SELF_SIGNED_CERT_IN_CHAIN/);
    expect(p).not.toContain("s3cret");
  });
  it("TLS to a plain port, plain text to a TLS port, a refused password", () => {
    expect(
      redisLinkProblem(
        err("ECONNRESET", "Client network socket disconnected before secure TLS connection was established"),
        "rediss://r:6379",
        true,
      ),
    ).toMatch(/does not speak TLS on that port/);
    expect(redisLinkProblem(new Error("Connection is closed."), "redis://r:6380", true)).toMatch(/use rediss:\/\//);
    expect(redisLinkProblem(new Error("WRONGPASS invalid username-password pair"), "redis://r:6379", true)).toMatch(
      /refused the credentials/,
    );
  });
  it("nothing listening yet, or a timeout, is left to the reconnects", () => {
    expect(redisLinkProblem(err("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:6379"), "redis://127.0.0.1:6379", false)).toBeNull();
    expect(redisLinkProblem(err("ETIMEDOUT", "connect ETIMEDOUT"), "rediss://r:6380", false)).toBeNull();
    // ioredis's words for a refused connection: not a closed one.
    expect(redisLinkProblem(new Error("Connection is closed."), "redis://127.0.0.1:1", false)).toBeNull();
  });
});
