import { describe, expect, it } from "vitest";
import { serviceNameOf, tracingWanted } from "./tracing-env.ts";

describe("tracing-env", () => {
  it("traces only with an OTLP endpoint and the SDK not disabled", () => {
    expect(tracingWanted({})).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: " " })).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" })).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c:4318/v1/traces" })).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "TRUE" })).toBe(false);
  });

  it("names the service after its entry point unless OTEL_SERVICE_NAME says otherwise", () => {
    expect(serviceNameOf({}, "/app/services/indexer/src/main.ts")).toBe("evb-indexer");
    expect(serviceNameOf({ OTEL_SERVICE_NAME: "edge" }, "/app/services/indexer/src/main.ts")).toBe("edge");
    expect(serviceNameOf({}, "/tmp/other.ts")).toBe("evb");
  });
});
