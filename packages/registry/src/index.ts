export { chainNodeId } from "./chain-node-id.ts";
export { Heartbeat, type HeartbeatOptions } from "./heartbeat.ts";
export { brokerNodeHeartbeat, chainNodeHeartbeat } from "./node-heartbeats.ts";
export { type BrokerNode, type ChainNode, type ChainNodeBeat, NodeRegistry } from "./node-registry.ts";
export { type RegistryTimings, registryEnv, registryTimings } from "./registry-env.ts";
export {
  judgeLedger,
  LedgerGuard,
  type LedgerGuardOptions,
  type LedgerJudgement,
  type LedgerReports,
  ledgerReports,
} from "./ledger-guard.ts";
