import { type ServiceProcessOptions, startServiceProcess } from "./service-process.ts";
import { Supervised, type SupervisedChild, type SupervisedOptions } from "./supervised.ts";

export interface SupervisedServiceOptions
  extends ServiceProcessOptions,
    Pick<SupervisedOptions<SupervisedChild>, "progress" | "policy" | "now"> {
  /** Starts the process and resolves once it is healthy; default `startServiceProcess`. */
  launch?: (opts: ServiceProcessOptions & { onSpawn: (c: SupervisedChild) => void }) => Promise<SupervisedChild>;
}

/** A service process (gateway, indexer, notifier) that `npm start` keeps running: restarted with backoff when it dies. */
export class SupervisedService extends Supervised {
  constructor(o: SupervisedServiceOptions) {
    super({
      name: o.name,
      progress: o.progress,
      policy: o.policy,
      now: o.now,
      launch: (onSpawn) => (o.launch ?? startServiceProcess)({ ...o, onSpawn }),
    });
  }
}
