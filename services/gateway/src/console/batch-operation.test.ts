import { describe, expect, it } from "vitest";
import { BrokerError } from "@evb/domain";
import type { AccessControl } from "../http/access-control.ts";
import type { Operation, OperationAccess, OperationContext } from "../http/operation.ts";
import { Params } from "../http/params.ts";
import { data } from "../http/replies.ts";
import { batchOperation } from "./batch-operation.ts";

const op = (path: string, handle: Operation["handle"], access: OperationAccess = {}): Operation => ({
  path,
  kind: "admin",
  variants: ["M"],
  ...access,
  handle,
});
const operations: Operation[] = [
  op("admin/group/general", async (ctx) => data({ group: ctx.params.optional("groupId") ?? "1" })),
  op("admin/deadLetters", async () => {
    throw BrokerError.of("UNKNOWN_GROUP");
  }),
  op("admin/replayDeadLetters", async () => data(["released"]), { role: "admin", groupScope: "all" }),
];
const logger = { error() {}, warn() {}, info() {}, debug() {}, child: () => logger } as never;

/** Keys that may read group 1 only. */
const access = {
  checks: { permits: async (_key: unknown, _op: unknown, groupId: string | undefined) => ((groupId ?? "1") === "1" ? "ok" : "forbidden") },
} as unknown as AccessControl;

const run = async (calls: unknown) => {
  const batch = batchOperation({ operations, access, logger });
  const params = new Params(new Map([["calls", [JSON.stringify(calls)]]]), "M");
  const reply = await batch.handle({
    variant: "M",
    params,
    req: {} as never,
    remoteIp: "",
    caller: { address: "", keyId: null },
  } as OperationContext);
  return (reply as { data: unknown }).data;
};

describe("admin/batch", () => {
  it("answers each read on its own, in order: data, broker error, a call the key may not make", async () => {
    expect(
      await run([
        { op: "admin/group/general", params: { groupId: "1" } },
        { op: "admin/deadLetters", params: {} },
        { op: "admin/group/general", params: { groupId: "2" } },
      ]),
    ).toEqual([
      { code: 0, data: { group: "1" } },
      { code: BrokerError.of("UNKNOWN_GROUP").code, message: expect.any(String) },
      { status: 403, message: "not allowed" },
    ]);
  });

  it("never carries a write, an unknown operation or itself", async () => {
    const refused = await run([
      { op: "admin/replayDeadLetters", params: {} },
      { op: "admin/nothing", params: {} },
      { op: "admin/batch", params: {} },
    ]);
    expect((refused as { status: number }[]).map((r) => r.status)).toEqual([404, 404, 404]);
  });

  it("refuses a malformed or oversized list with the generic code", async () => {
    await expect(run({ op: "admin/group/general" })).rejects.toThrow(/calls: a list/);
    await expect(run(Array.from({ length: 33 }, () => ({ op: "admin/group/general" })))).rejects.toThrow(/calls: a list/);
  });
});
