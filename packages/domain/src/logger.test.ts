import { describe, expect, it } from "vitest";
import { errorMessage } from "./logger.ts";

describe("errorMessage", () => {
  it("is an Error's message alone, without its type or stack, and anything else as text", () => {
    expect(errorMessage(new TypeError("connection terminated"))).toBe("connection terminated");
    expect(errorMessage("READONLY")).toBe("READONLY");
    expect(errorMessage(undefined)).toBe("undefined");
  });
});
