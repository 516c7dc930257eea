import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

/** One span as an OTLP/HTTP JSON export carries it, with the service that sent it. */
export interface ReceivedSpan {
  service: string;
  /** The instrumentation scope (`evb`, `@opentelemetry/instrumentation-pg`, …). */
  scope: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  links: { traceId: string; spanId: string }[];
  /** The span's string attributes (`url.path`, `http.route`, …). */
  attributes: Record<string, string>;
}

interface KeyValue {
  key: string;
  value: { stringValue?: string };
}
interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      scope?: { name?: string };
      spans?: (Omit<ReceivedSpan, "service" | "scope" | "links" | "attributes"> & {
        links?: ReceivedSpan["links"];
        attributes?: KeyValue[];
      })[];
    }[];
  }[];
}

/**
 * A real OTLP/HTTP trace receiver for tests: accepts `POST /v1/traces` in the JSON encoding (what
 * @opentelemetry/exporter-trace-otlp-http sends; gzip accepted), answers 200 `{}` and keeps
 * every span. Anything else (protobuf) answers 415.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  private readonly server: Server;

  private constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        if (req.method !== "POST" || req.url !== "/v1/traces" || !String(req.headers["content-type"]).startsWith("application/json")) {
          res.writeHead(415).end();
          return;
        }
        const raw = Buffer.concat(chunks);
        const body = req.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw;
        this.take(JSON.parse(body.toString("utf8")) as ExportRequest);
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
  }

  static async start(): Promise<OtlpReceiver> {
    const r = new OtlpReceiver();
    await new Promise<void>((resolve) => r.server.listen(0, "127.0.0.1", resolve));
    return r;
  }

  /** What OTEL_EXPORTER_OTLP_ENDPOINT is set to (the exporter appends `/v1/traces`). */
  url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private take(req: ExportRequest): void {
    for (const rs of req.resourceSpans ?? []) {
      const service = rs.resource?.attributes?.find((a) => a.key === "service.name")?.value.stringValue ?? "";
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            service,
            scope: ss.scope?.name ?? "",
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? "",
            name: s.name,
            kind: s.kind,
            links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
            attributes: Object.fromEntries(
              (s.attributes ?? []).flatMap((a) => (a.value.stringValue === undefined ? [] : [[a.key, a.value.stringValue]])),
            ),
          });
        }
      }
    }
  }
}
