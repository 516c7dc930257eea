import { z } from "zod";
import { ConfigError } from "./env.ts";

/** The highest sealer number: it is part of every block an indexer seals (10 bits). */
export const SEALER_INDEX_MAX = 1023;

/**
 * Where an orchestrator says who this instance is, for the services that need a distinct
 * SEALER_INDEX or INSTANCE_ADDRESS. Kubernetes fills both through the downward API
 * (deploy/kubernetes): POD_NAME from `metadata.name`, POD_IP from `status.podIP`.
 */
export const podNameVar = z
  .string()
  .optional()
  .describe(
    "this pod's name, e.g. indexer-2 (Kubernetes: fieldRef metadata.name); when SEALER_INDEX is unset, its trailing -N (a StatefulSet ordinal) is the sealer number",
  );
export const podIpVar = z
  .string()
  .optional()
  .describe(
    "this pod's IPv4 address (Kubernetes: fieldRef status.podIP); when INSTANCE_ADDRESS is unset, INSTANCE_ADDRESS is POD_IP and the service's port",
  );

/** What the derivation reads; empty counts as unset, as everywhere in the configuration. */
export interface IdentityInput {
  SEALER_INDEX?: string;
  INSTANCE_ADDRESS?: string;
  POD_NAME?: string;
  POD_IP?: string;
}

export interface IdentityNeeds {
  /** Whether this service has a sealer number (the indexer). */
  sealerIndex: boolean;
  /** The variable holding the port INSTANCE_ADDRESS names, for messages. */
  portVar: string;
  /** That port as the service will listen on it; undefined when its value is bad (parseEnv then says so). */
  port: number | undefined;
}

/** The values derived for variables left unset; an explicit value is never replaced. */
export type DerivedIdentity = Pick<IdentityInput, "SEALER_INDEX" | "INSTANCE_ADDRESS">;

const ORDINAL = /-(\d+)$/;

/**
 * SEALER_INDEX from the pod name's StatefulSet ordinal and INSTANCE_ADDRESS from the pod's IP and
 * port, each only where the variable is unset, so that replicas of one manifest get distinct
 * values without a value set by hand. A pod name without a trailing -N derives nothing (the
 * default 0 stays). HOSTNAME is not read: on a bare host it is any machine name (ip-10-0-0-12,
 * web-3), which would silently change the sealer number of an indexer that runs there today.
 * Throws a ConfigError when the pod says something that cannot be a valid value.
 */
export function deriveIdentity(service: string, input: IdentityInput, needs: IdentityNeeds): DerivedIdentity {
  const set = (v: string | undefined) => v !== undefined && v !== "";
  const out: DerivedIdentity = {};
  const problems: string[] = [];
  if (needs.sealerIndex && !set(input.SEALER_INDEX) && set(input.POD_NAME)) {
    const m = ORDINAL.exec(input.POD_NAME as string);
    const ordinal = m ? Number(m[1]) : undefined;
    if (ordinal !== undefined && ordinal > SEALER_INDEX_MAX) {
      problems.push(
        `SEALER_INDEX is unset and POD_NAME ("${input.POD_NAME}") ends in ordinal ${ordinal}, above the highest sealer number ${SEALER_INDEX_MAX}. Fix: run at most ${SEALER_INDEX_MAX + 1} indexers (as a StatefulSet, whose ordinals count from 0), or set SEALER_INDEX (0–${SEALER_INDEX_MAX}) on each`,
      );
    } else if (ordinal !== undefined) out.SEALER_INDEX = String(ordinal);
  }
  if (!set(input.INSTANCE_ADDRESS) && set(input.POD_IP)) {
    const ip = (input.POD_IP as string).trim();
    if (ip.includes(":")) {
      problems.push(
        `INSTANCE_ADDRESS is unset and POD_IP ("${ip}") is an IPv6 address, which an ip:port INSTANCE_ADDRESS cannot hold. Fix: set INSTANCE_ADDRESS to a name and port, e.g. the pod's DNS name`,
      );
    } else if (needs.port === 0) {
      problems.push(
        `INSTANCE_ADDRESS is unset and POD_IP is set, but ${needs.portVar} is 0 (a free port, known only once listening). Fix: set ${needs.portVar} to a fixed port, or set INSTANCE_ADDRESS`,
      );
    } else if (needs.port !== undefined) out.INSTANCE_ADDRESS = `${ip}:${needs.port}`;
  }
  if (problems.length > 0) throw new ConfigError(service, problems);
  return out;
}

/**
 * The environment a service parses: `env` with its derived identity filled in. `portField` is the
 * schema of the variable `portVar` (its default included), read as the service will read it.
 */
export function withDerivedIdentity(
  service: string,
  env: NodeJS.ProcessEnv,
  o: { sealerIndex: boolean; portVar: string; portField: z.ZodType },
): NodeJS.ProcessEnv {
  const raw = env[o.portVar] === "" ? undefined : env[o.portVar];
  const parsed = o.portField.safeParse(raw);
  const port = parsed.success && typeof parsed.data === "number" ? parsed.data : undefined;
  return { ...env, ...deriveIdentity(service, env, { sealerIndex: o.sealerIndex, portVar: o.portVar, port }) };
}
