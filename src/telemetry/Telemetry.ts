/**
 * Tracing: a span per request (the platform's `http.server` span, annotated with the request id), per SQL statement
 * (`sql.execute`, from @effect/sql) and per model call. W3C `traceparent` headers continue the caller's trace. Spans
 * are exported over OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set; otherwise tracing is switched off, which
 * spares the hot path the cost of spans nobody reads.
 */
import { NodeSdk } from "@effect/opentelemetry"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { BatchSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Effect, Layer, Option } from "effect"
import { AppConfig } from "../config/AppConfig.js"

/** Tracing into the given span processor (tests pass an in-memory exporter's). */
export const tracingWith = (serviceName: string, spanProcessor: SpanProcessor) =>
  NodeSdk.layer(() => ({
    resource: { serviceName, serviceVersion: "0.1.0" },
    spanProcessor
  }))

/** Tracing as configured: OTLP/HTTP export when an endpoint is set, none otherwise. */
export const TelemetryLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.otlpEndpoint, {
      onNone: () => Layer.setTracerEnabled(false),
      onSome: (endpoint) =>
        tracingWith(
          config.serviceName,
          new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, "")}/v1/traces` }))
        )
    }))
)
