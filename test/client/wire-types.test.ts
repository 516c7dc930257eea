import { describe, expectTypeOf, it } from "vitest";
import type { BrokerEvent, CallbackBody } from "evb-client";
import type { CallbackBody as WireCallbackBody, WireEvent } from "@evb/domain";

/**
 * `evb-client` is published and depends on nothing of ours, so it cannot import the wire types
 * from `@evb/domain`; its copies are held to them here. tsc (`npm run typecheck`) fails when a
 * field is added to, removed from or retyped in one and not the other.
 */
type WithExtensions = Extract<WireEvent, { extensions: unknown }>;

describe("the client's wire types", () => {
  it("BrokerEvent is the Event wireEvent builds, in every variant", () => {
    expectTypeOf<WireEvent>().toExtend<BrokerEvent>();
    expectTypeOf<BrokerEvent>().toExtend<WireEvent>();
    expectTypeOf<keyof BrokerEvent>().toEqualTypeOf<keyof WithExtensions>();
    expectTypeOf<BrokerEvent["extensions"]>().toEqualTypeOf<WithExtensions["extensions"] | undefined>();
  });

  it("CallbackBody is the body callbackBody builds", () => {
    expectTypeOf<WireCallbackBody>().toExtend<CallbackBody>();
    expectTypeOf<CallbackBody>().toExtend<WireCallbackBody>();
    expectTypeOf<keyof CallbackBody>().toEqualTypeOf<keyof WireCallbackBody>();
    expectTypeOf<WireCallbackBody["event"]>().toEqualTypeOf<WireEvent>();
    expectTypeOf<CallbackBody["event"]>().toEqualTypeOf<BrokerEvent>();
  });
});
