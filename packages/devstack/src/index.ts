export { Child, type ChildOptions, killEveryChild } from "./child.ts";
export { ensureKafkaJars, KafkaCluster, type KafkaClusterOptions } from "./kafka-cluster.ts";
export { MissingPrerequisiteError } from "./prerequisites.ts";
export { consoleProgress, type Progress } from "./progress.ts";
export { LocalStack, type Stack, type StackOptions, startStack } from "./stack.ts";
export { formatLogLine } from "./log-format.ts";
export { freePort, type ServiceName, type ServiceProcessOptions, startServiceProcess } from "./service-process.ts";
export { describeTakenPorts, portHolder, type TakenPort, takenPorts } from "./port-holder.ts";
export { SupervisedService, type SupervisedServiceOptions } from "./supervised-service.ts";
