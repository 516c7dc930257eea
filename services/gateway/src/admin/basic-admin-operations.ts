import type { Operation } from "../http/operation.ts";
import { data } from "../http/replies.ts";
import type { BuildInfo } from "./build-info.ts";

export interface BasicAdminDeps {
  buildInfo: BuildInfo;
  groupList: readonly string[];
}

/** getVersion and listGroup: facts the gateway knows without storage. */
export function basicAdminOperations(deps: BasicAdminDeps): Operation[] {
  return [
    {
      path: "admin/getVersion",
      kind: "admin",
      variants: ["L", "M", "E"],
      groupScope: "groupless",
      async handle() {
        const b = deps.buildInfo;
        return data({
          eventVersion: b.eventVersion,
          gitCommitTimeStamp: b.gitCommitTimeStamp,
          gitBranch: b.gitBranch,
          gitCommitHash: b.gitCommitHash,
        });
      },
    },
    {
      path: "admin/listGroup",
      kind: "admin",
      variants: ["L", "M", "E"],
      groupScope: "groupless",
      async handle() {
        return data([...deps.groupList]);
      },
    },
  ];
}
