import { describe, expect, it } from "vitest";
import { adminOperations } from "../../services/gateway/src/admin/admin-operations.ts";
import { eventAdminOperations } from "../../services/gateway/src/events/event-admin-operations.ts";
import { getEventOperation } from "../../services/gateway/src/events/get-event-operation.ts";
import { publishOperation } from "../../services/gateway/src/events/publish-operation.ts";
import { subscriptionOperations } from "../../services/gateway/src/subscriptions/subscription-operations.ts";
import { topicOperations } from "../../services/gateway/src/topics/topic-operations.ts";
import { OPERATIONS } from "./operation-catalogue.ts";

/** Stands in for every dependency: building the operations must not call any of them. */
const stub: never = new Proxy(() => stub, { get: () => stub, apply: () => stub }) as never;

describe("the fuzz suite's operation catalogue", () => {
  it("lists exactly the operations the gateway builds, with their variants", () => {
    const built = [
      ...topicOperations(stub),
      publishOperation(stub),
      getEventOperation(stub),
      ...eventAdminOperations(stub),
      ...adminOperations(stub),
      ...subscriptionOperations(stub),
    ];
    const key = (o: { path: string; variants: readonly string[] }) => `${o.path} ${[...o.variants].sort().join("")}`;
    expect(OPERATIONS.map(key).sort()).toEqual(built.map(key).sort());
  });
});
