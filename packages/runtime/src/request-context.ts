import { AsyncLocalStorage } from "node:async_hooks";

const context = new AsyncLocalStorage<{ requestId: string }>();

/**
 * Runs `fn` (and everything it starts, awaits included) as part of the HTTP request
 * `requestId`: every line the service logger writes meanwhile carries `requestId`, whichever
 * component logs it and whatever logger it was given at construction.
 */
export function withRequestId<T>(requestId: string, fn: () => T): T {
  return context.run({ requestId }, fn);
}

/** The request id of the HTTP request this code runs for, if any. */
export function currentRequestId(): string | undefined {
  return context.getStore()?.requestId;
}
