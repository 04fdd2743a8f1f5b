/**
 * Tracing and metrics export. Tracing: a span per request (the platform's server span, named `{method} {route}` with
 * OpenTelemetry's HTTP attributes by src/server/RequestObserver.ts, annotated with the request id), per SQL statement
 * (`sql.execute`, from effect/sql) and per model call. W3C `traceparent` headers continue the caller's trace. Spans
 * are exported over OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set; otherwise tracing is switched off, which
 * spares the hot path the cost of spans nobody reads. Metrics (Metrics.ts)
 * are pushed to the same endpoint (`/v1/metrics`, OTLP/HTTP JSON, cumulative) every `OTEL_METRIC_EXPORT_INTERVAL`
 * ms by Effect's OTLP exporter (effect/observability), which reads the same registry the Prometheus listener
 * renders. Each process pushes its own, as its own `service.instance.id` (host and pid): the collector adds up the
 * workers' figures (the Prometheus listener of an instance adds them up itself, InstanceMetrics.ts).
 */
import { hostname } from "node:os"
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { BatchSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Duration, Effect, Layer, Option, References } from "effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as OtlpMetrics from "effect/observability/OtlpMetrics"
import * as OtlpSerialization from "effect/observability/OtlpSerialization"
import { AppConfig } from "../config/AppConfig.js"

/** Tracing into the given span processor (tests pass an in-memory exporter's). */
export const tracingWith = (serviceName: string, spanProcessor: SpanProcessor) =>
  NodeSdk.layer(() => ({
    resource: { serviceName, serviceVersion: "0.1.0" },
    spanProcessor
  }))

/** Metrics pushed over OTLP/HTTP (JSON) to `<endpoint>/v1/metrics` every `intervalMs`. */
export const metricsExportTo = (endpoint: string, serviceName: string, intervalMs: number) =>
  OtlpMetrics.layer({
    url: `${endpoint.replace(/\/+$/, "")}/v1/metrics`,
    resource: {
      serviceName,
      serviceVersion: "0.1.0",
      attributes: { "service.instance.id": `${hostname()}:${process.pid}` }
    },
    exportInterval: Duration.millis(intervalMs)
  }).pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(FetchHttpClient.layer))

/** Tracing and metrics export as configured: OTLP/HTTP when an endpoint is set, none otherwise. */
export const TelemetryLive = Layer.unwrap(
  Effect.map(AppConfig, (config) =>
    Option.match(config.otlpEndpoint, {
      onNone: () => Layer.succeed(References.TracerEnabled, false),
      onSome: (endpoint) =>
        Layer.merge(
          tracingWith(
            config.serviceName,
            new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, "")}/v1/traces` }))
          ),
          metricsExportTo(endpoint, config.serviceName, config.otlpMetricsIntervalMs)
        )
    }))
)
