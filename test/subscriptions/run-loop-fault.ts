import { Worker } from "bullmq";

/**
 * Fault injection for the notifier-fatal tests, done from outside the code under test: BullMQ
 * 6's run loop practically never dies, so this patch makes it. Every Worker's `run()` then
 * behaves as in a loop-killing bug: on `kill()` the worker stops taking jobs (paused) and
 * `run()` rejects. Loaded into a child process by NODE_OPTIONS="--import <this file>" with
 * EVB_FAULT_KILL_RUN_LOOP_AFTER_MS set, it kills the loops that long after they start.
 */
export function injectRunLoopFault(): { kill(): void; restore(): void } {
  const original = Worker.prototype.run;
  let kill = () => {};
  const killed = new Promise<void>((resolve) => {
    kill = resolve;
  });
  Worker.prototype.run = async function run(this: Worker): Promise<void> {
    const loop = original.call(this);
    await killed;
    loop.catch(() => {});
    await this.pause(true);
    throw new Error("injected fault: the BullMQ run loop died");
  };
  return {
    kill,
    restore: () => {
      Worker.prototype.run = original;
    },
  };
}

const after = Number(process.env.EVB_FAULT_KILL_RUN_LOOP_AFTER_MS ?? "");
if (after > 0) {
  const fault = injectRunLoopFault();
  setTimeout(fault.kill, after).unref();
}
