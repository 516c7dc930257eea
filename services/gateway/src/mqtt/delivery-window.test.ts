import { describe, expect, it } from "vitest";
import { DeliveryWindow } from "./delivery-window.ts";

const settle = () => new Promise((r) => setImmediate(r));

describe("DeliveryWindow", () => {
  it("holds at most `limit` deliveries unacknowledged; room() waits until a PUBACK frees one", async () => {
    const w = new DeliveryWindow(2);
    const sent: number[] = [];
    w.send(
      (id) => sent.push(id),
      () => {},
    );
    await w.room();
    w.send(
      (id) => sent.push(id),
      () => {},
    );
    let roomy = false;
    void w.room().then(() => {
      roomy = true;
    });
    await settle();
    expect(roomy).toBe(false);
    expect(w.ack(sent[0] as number)).toBe(true);
    await settle();
    expect(roomy).toBe(true);
    expect(w.size).toBe(1);
  });

  it("a delivery offered while full waits and goes out under a fresh id on the next PUBACK", () => {
    const w = new DeliveryWindow(1);
    const sent: number[] = [];
    const acked: string[] = [];
    w.send(
      (id) => sent.push(id),
      () => acked.push("a"),
    );
    w.send(
      (id) => sent.push(id),
      () => acked.push("b"),
    );
    expect(sent).toEqual([1]);
    w.ack(1);
    expect(sent).toEqual([1, 2]);
    expect(w.ack(1)).toBe(false);
    w.ack(2);
    expect(acked).toEqual(["a", "b"]);
  });

  it("packet ids wrap after 65535 and skip ids still in flight", () => {
    const w = new DeliveryWindow(10);
    const sent: number[] = [];
    w.send(
      (id) => sent.push(id),
      () => {},
    );
    for (let i = 0; i < 65_534; i++) {
      w.send(
        (id) => w.ack(id),
        () => {},
      );
    }
    w.send(
      (id) => sent.push(id),
      () => {},
    );
    expect(sent).toEqual([1, 2]);
  });

  it("close() releases whoever waits for room and drops queued deliveries", async () => {
    const w = new DeliveryWindow(1);
    const sent: number[] = [];
    w.send(
      (id) => sent.push(id),
      () => {},
    );
    w.send(
      (id) => sent.push(id),
      () => {},
    );
    const room = w.room();
    w.close();
    await room;
    w.ack(1);
    expect(sent).toEqual([1]);
  });
});
