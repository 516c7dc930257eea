import { describe, expect, it } from "vitest";
import { type FrameItem, FrameReader } from "./frame-reader.ts";
import { header } from "./stomp-frame.ts";

const unsubscribe = (id: number) => `UNSUBSCRIBE\nid:${id}\n\n\u0000`;
const ids = (items: FrameItem[]) => items.map((i) => ("malformed" in i ? "malformed" : header(i, "id")));

describe("FrameReader", () => {
  it("decodes nothing on append, then at most `max` frames per take, read on from where the last stopped, message after message", () => {
    const r = new FrameReader();
    const first = Buffer.from(Array.from({ length: 10 }, (_, i) => `${unsubscribe(i)}\n`).join(""));
    r.append(first);
    r.append(Buffer.from(unsubscribe(10) + unsubscribe(11)));
    expect(r.buffered).toBe(first.length + 2 * unsubscribe(10).length);
    expect(ids(r.take(4))).toEqual(["0", "1", "2", "3"]);
    expect(ids(r.take(4))).toEqual(["4", "5", "6", "7"]);
    expect(ids(r.take(4))).toEqual(["8", "9", "10", "11"]);
    expect(r.take(4)).toEqual([]);
    expect(r.buffered).toBe(0);
  });

  it("one message of 20,000 frames costs one batch per take", () => {
    const r = new FrameReader();
    r.append(Buffer.from(Array.from({ length: 20_000 }, (_, i) => unsubscribe(i)).join("")));
    let takes = 0;
    const seen: string[] = [];
    for (let batch = r.take(64); batch.length > 0; batch = r.take(64)) {
      expect(batch.length).toBeLessThanOrEqual(64);
      seen.push(...(ids(batch) as string[]));
      takes++;
    }
    expect(takes).toBe(Math.ceil(20_000 / 64));
    expect(seen).toEqual(Array.from({ length: 20_000 }, (_, i) => String(i)));
  });

  it("a malformed frame comes once, after the frames before it; nothing after it is read, later messages neither", () => {
    const r = new FrameReader();
    r.append(Buffer.from(`${unsubscribe(1)}${unsubscribe(2)}BOGUS\n\n\u0000${unsubscribe(3)}`));
    r.append(Buffer.from(unsubscribe(4)));
    expect(ids(r.take(1))).toEqual(["1"]);
    expect(ids(r.take(5))).toEqual(["2", "malformed"]);
    expect(r.buffered).toBe(0);
    r.append(Buffer.from(unsubscribe(5)));
    expect(r.take(5)).toEqual([]);
  });

  it("an incomplete trailing frame is malformed (frames never span messages)", () => {
    const r = new FrameReader();
    r.append(Buffer.from("SEND\ndestination:t\n\nno NUL"));
    expect(r.take(5)).toMatchObject([{ malformed: expect.stringMatching(/NUL/) }]);
  });
});
