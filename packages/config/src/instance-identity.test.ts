import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, intVar } from "./env.ts";
import { deriveIdentity, type IdentityNeeds, withDerivedIdentity } from "./instance-identity.ts";

const indexer: IdentityNeeds = { sealerIndex: true, portVar: "HEALTH_PORT", port: 9000 };
const gateway: IdentityNeeds = { sealerIndex: false, portVar: "PORT", port: 8080 };

const failure = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("expected a ConfigError");
};

describe("deriveIdentity: the sealer number", () => {
  it("is the StatefulSet ordinal of POD_NAME when SEALER_INDEX is unset", () => {
    expect(deriveIdentity("indexer", { POD_NAME: "indexer-0" }, indexer)).toEqual({ SEALER_INDEX: "0" });
    expect(deriveIdentity("indexer", { POD_NAME: "evb-indexer-17" }, indexer)).toEqual({ SEALER_INDEX: "17" });
    expect(deriveIdentity("indexer", { POD_NAME: "indexer-1023" }, indexer)).toEqual({ SEALER_INDEX: "1023" });
  });

  it("leaves an explicit SEALER_INDEX alone, whatever the pod is called", () => {
    expect(deriveIdentity("indexer", { SEALER_INDEX: "5", POD_NAME: "indexer-2" }, indexer)).toEqual({});
    expect(deriveIdentity("indexer", { SEALER_INDEX: "5", POD_NAME: "indexer-4000" }, indexer)).toEqual({});
  });

  it("counts an empty SEALER_INDEX as unset, as the rest of the configuration does", () => {
    expect(deriveIdentity("indexer", { SEALER_INDEX: "", POD_NAME: "indexer-3" }, indexer)).toEqual({ SEALER_INDEX: "3" });
  });

  it("derives nothing from a pod name without a trailing ordinal, so the default 0 stays", () => {
    for (const POD_NAME of ["indexer", "indexer-7d9f8b6c5-xk2lp", "indexer-", "", "indexer-2a"])
      expect(deriveIdentity("indexer", { POD_NAME }, indexer)).toEqual({});
    expect(deriveIdentity("indexer", {}, indexer)).toEqual({});
  });

  it("refuses an ordinal above 1023 with a fix, rather than a range error on a variable nobody set", () => {
    const message = failure(() => deriveIdentity("indexer", { POD_NAME: "indexer-1024" }, indexer));
    expect(message).toContain("indexer: invalid configuration");
    expect(message).toContain('POD_NAME ("indexer-1024") ends in ordinal 1024, above the highest sealer number 1023');
    expect(message).toContain("set SEALER_INDEX (0–1023)");
  });

  it("is not derived for a service without a sealer number", () => {
    expect(deriveIdentity("gateway", { POD_NAME: "gateway-3" }, gateway)).toEqual({});
  });
});

describe("deriveIdentity: the instance address", () => {
  it("is POD_IP and the service's port when INSTANCE_ADDRESS is unset", () => {
    expect(deriveIdentity("gateway", { POD_IP: "10.1.2.3" }, gateway)).toEqual({ INSTANCE_ADDRESS: "10.1.2.3:8080" });
    expect(deriveIdentity("indexer", { POD_IP: "10.1.2.4", POD_NAME: "indexer-1" }, indexer)).toEqual({
      SEALER_INDEX: "1",
      INSTANCE_ADDRESS: "10.1.2.4:9000",
    });
  });

  it("leaves an explicit INSTANCE_ADDRESS alone", () => {
    expect(deriveIdentity("gateway", { POD_IP: "10.1.2.3", INSTANCE_ADDRESS: "gw.example:443" }, gateway)).toEqual({});
  });

  it("derives nothing without POD_IP (the service then names HOST and its port, as before)", () => {
    expect(deriveIdentity("gateway", {}, gateway)).toEqual({});
    expect(deriveIdentity("gateway", { POD_IP: "" }, gateway)).toEqual({});
  });

  it("refuses an IPv6 POD_IP, which an ip:port address cannot hold", () => {
    expect(failure(() => deriveIdentity("gateway", { POD_IP: "fd00::12" }, gateway))).toContain('POD_IP ("fd00::12") is an IPv6 address');
  });

  it("refuses a free port (0), whose number the address cannot know yet", () => {
    const message = failure(() => deriveIdentity("indexer", { POD_IP: "10.0.0.9" }, { ...indexer, port: 0 }));
    expect(message).toContain("HEALTH_PORT is 0");
  });

  it("leaves a bad port to the schema's own message", () => {
    expect(deriveIdentity("gateway", { POD_IP: "10.0.0.9" }, { ...gateway, port: undefined })).toEqual({});
  });

  it("names every problem at once", () => {
    const message = failure(() => deriveIdentity("indexer", { POD_NAME: "indexer-2000", POD_IP: "::1" }, indexer));
    expect(message).toContain("ordinal 2000");
    expect(message).toContain("IPv6");
  });
});

describe("withDerivedIdentity", () => {
  const PORT = intVar(8080, 0, 65535, "a port");
  const gatewayPort = { sealerIndex: false, portVar: "PORT", portField: PORT };

  it("fills the derived variables into the environment and keeps the rest", () => {
    const env = withDerivedIdentity("gateway", { POD_IP: "10.0.0.1", LOG_LEVEL: "warn" }, gatewayPort);
    expect(env).toEqual({ POD_IP: "10.0.0.1", LOG_LEVEL: "warn", INSTANCE_ADDRESS: "10.0.0.1:8080" });
  });

  it("takes the port as the service will: set, else the schema's default", () => {
    expect(withDerivedIdentity("gateway", { POD_IP: "10.0.0.1", PORT: "8443" }, gatewayPort).INSTANCE_ADDRESS).toBe("10.0.0.1:8443");
    expect(withDerivedIdentity("gateway", { POD_IP: "10.0.0.1", PORT: "" }, gatewayPort).INSTANCE_ADDRESS).toBe("10.0.0.1:8080");
    expect(withDerivedIdentity("gateway", { POD_IP: "10.0.0.1", PORT: "abc" }, gatewayPort).INSTANCE_ADDRESS).toBeUndefined();
    expect(
      withDerivedIdentity("gateway", { POD_IP: "10.0.0.1" }, { ...gatewayPort, portField: z.string().optional() }).INSTANCE_ADDRESS,
    ).toBeUndefined();
  });
});
