import { Worker } from "bullmq";

/**
 * Fault injection for the notifier-fatal tests, done from outside the code under test: BullMQ
 * 6's run loop practically never dies, so this patch makes it. Every Worker's `run()` then
 * behaves as in a loop-killing bug: on `kill()` the worker stops taking jobs (paused) and
 * `run()` rejects.
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

// Loaded with NODE_OPTIONS="--import <this file>" and EVB_FAULT_KILL_RUN_LOOP_ON=SIGUSR2, the
// loops die when the test sends that signal: after it has seen the process healthy, so a slow
// start on a loaded machine cannot make the fault fire before the service is up.
const signal = process.env.EVB_FAULT_KILL_RUN_LOOP_ON;
if (signal === "SIGUSR2") {
  const fault = injectRunLoopFault();
  process.once(signal, fault.kill);
}
