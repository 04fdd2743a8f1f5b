/**
 * A real HTTP server on 127.0.0.1 (random port) standing in for the parts of Stripe's API the StripeProcessor uses:
 * Checkout Sessions, billing portal sessions, customers and PaymentIntents. It parses the SDK's form-encoded bodies
 * (`a[b][0][c]=v`; every value arrives as a string), checks the bearer key, validates what Stripe validates and the
 * adapter could get wrong (`expires_at` 30 minutes to 24 hours ahead; `customer` excludes `customer_creation` and
 * `customer_email`; a portal needs a known customer), and answers with realistic objects. Idempotency works as
 * Stripe's: a repeated `Idempotency-Key` with the same body replays the stored answer (`Idempotent-Replayed: true`),
 * with another body it is a 400 `idempotency_error`; scripted 5xx, hangs and drops are not stored, like a fault
 * before execution. Each request takes its endpoint's next scripted reply, else the endpoint's sticky reply, else
 * `ok`. `completeSession` pays an open session as a customer would; `signedWebhook` signs an event with the SDK's
 * own `generateTestHeaderString`.
 */
import { randomBytes } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { Context, Effect, Layer, Redacted } from "effect"
import Stripe from "stripe"
import type { StripeProcessorOptions } from "../../src/billing/StripeProcessor.js"

/** The secret key the fake accepts unless started with another. */
export const FAKE_STRIPE_SECRET_KEY = "sk_test_arbiter_fake_key"
/** A webhook signing secret for tests. */
export const FAKE_WEBHOOK_SECRET = "whsec_arbiter_fake_secret"

/** The routes the fake serves. */
export type StripeEndpoint =
  | "POST /v1/checkout/sessions"
  | "GET /v1/checkout/sessions/:id"
  | "POST /v1/billing_portal/sessions"
  | "POST /v1/customers"
  | "POST /v1/payment_intents"
  | "GET /v1/payment_intents/:id"

/** What the fake does with one request. */
export type FakeStripeReply =
  /** The realistic success object (a PaymentIntent succeeds). */
  | { readonly kind: "ok" }
  /** PaymentIntent: 200 with status `requires_action` and a `next_action`. */
  | { readonly kind: "requires_action" }
  /** PaymentIntent: 402 `card_error` `authentication_required`, the intent back in `requires_payment_method`. */
  | { readonly kind: "authentication_required" }
  /** PaymentIntent: 402 `card_error` `card_declined` with this decline code (default `generic_decline`). */
  | { readonly kind: "decline"; readonly declineCode?: string }
  /** Any status with a Stripe error body (type defaults to `api_error` for 5xx, else `invalid_request_error`). */
  | { readonly kind: "status"; readonly status: number; readonly type?: string; readonly code?: string }
  /** No answer until the client gives up. */
  | { readonly kind: "hang" }
  /** The connection is destroyed without a response. */
  | { readonly kind: "drop" }

/** One request the fake received. */
export interface FakeStripeRequest {
  readonly method: string
  readonly path: string
  readonly endpoint: StripeEndpoint | null
  readonly headers: http.IncomingHttpHeaders
  readonly idempotencyKey: string | null
  /** The form body parsed into nested objects and arrays of strings. */
  readonly body: any
  readonly at: number
}

/** A running fake with plain (non-Effect) controls. */
export interface FakeStripeServer {
  readonly host: string
  readonly port: number
  readonly secretKey: string
  /**
   * Adapter options pointing at this fake, with overrides: its key, webhook secret `FAKE_WEBHOOK_SECRET`, one SDK
   * retry and a 5 s timeout, so failure tests stay fast.
   */
  readonly processorOptions: (overrides?: Partial<StripeProcessorOptions>) => StripeProcessorOptions
  /** Queues replies for the endpoint's next requests, in order. */
  readonly script: (endpoint: StripeEndpoint, ...replies: ReadonlyArray<FakeStripeReply>) => void
  /** Answers every later request of the endpoint with this reply (null restores `ok`). */
  readonly always: (endpoint: StripeEndpoint, reply: FakeStripeReply | null) => void
  /** The requests received so far, oldest first. */
  readonly requests: (endpoint?: StripeEndpoint) => ReadonlyArray<FakeStripeRequest>
  /** Creates a customer directly, as if made earlier; returns its id. */
  readonly seedCustomer: (email?: string) => string
  /** Pays an open Checkout Session: creates its customer if needed and a succeeded PaymentIntent with a card. */
  readonly completeSession: (sessionId: string, options?: { readonly paymentMethodId?: string }) => any
  readonly customers: () => ReadonlyArray<any>
  readonly sessions: () => ReadonlyArray<any>
  readonly paymentIntents: () => ReadonlyArray<any>
  /** Clears scripts, sticky replies, the log, stored objects and idempotency records. */
  readonly reset: () => void
  readonly close: () => Promise<void>
}

const UNSAFE_KEYS = new Set(["__proto__", "constructor", "prototype"])

/** Parses a form-encoded body with bracketed keys into nested objects and arrays (values stay strings). */
export const parseStripeForm = (raw: string): any => {
  const root: Record<string, any> = {}
  for (const pair of raw.split("&")) {
    if (pair === "") continue
    const at = pair.indexOf("=")
    const decode = (text: string) => decodeURIComponent(text.replace(/\+/g, " "))
    const key = decode(at < 0 ? pair : pair.slice(0, at))
    const value = at < 0 ? "" : decode(pair.slice(at + 1))
    const path = key.replace(/\]/g, "").split("[")
    if (path.some((segment) => UNSAFE_KEYS.has(segment))) continue
    let node: any = root
    path.forEach((segment, index) => {
      const next = path[index + 1]
      if (next === undefined) node[segment] = value
      else node = node[segment] ??= /^\d+$/.test(next) ? [] : {}
    })
  }
  return root
}

const token = (length: number): string => randomBytes(length).toString("base64url").replace(/[-_]/g, "x").slice(0, length)
const nowSeconds = () => Math.floor(Date.now() / 1000)
const int = (value: unknown): number | null => typeof value === "string" && /^-?\d+$/.test(value) ? Number(value) : null

interface Answer {
  readonly status: number
  readonly body: unknown
}

const stripeError = (status: number, error: Record<string, unknown>): Answer => ({
  status,
  body: { error: { doc_url: `https://docs.stripe.com/error-codes`, request_log_url: null, ...error } }
})
const invalid = (message: string, param?: string, code = "parameter_invalid"): Answer =>
  stripeError(400, { type: "invalid_request_error", code, message, ...(param === undefined ? {} : { param }) })

/** Starts a fake Stripe on a random port of 127.0.0.1. */
export const startFakeStripe = async (options: { readonly secretKey?: string } = {}): Promise<FakeStripeServer> => {
  const secretKey = options.secretKey ?? FAKE_STRIPE_SECRET_KEY
  let queues = new Map<StripeEndpoint, Array<FakeStripeReply>>()
  let sticky = new Map<StripeEndpoint, FakeStripeReply>()
  let log: Array<FakeStripeRequest> = []
  let customers = new Map<string, any>()
  let sessions = new Map<string, any>()
  let intents = new Map<string, any>()
  let idempotency = new Map<string, { readonly fingerprint: string; readonly answer: Answer }>()

  const newCustomer = (body: any): any => {
    const customer = {
      id: `cus_${token(14)}`,
      object: "customer",
      address: null,
      balance: 0,
      created: nowSeconds(),
      currency: null,
      description: body.description ?? null,
      email: body.email ?? null,
      invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
      livemode: false,
      metadata: body.metadata ?? {},
      name: body.name ?? null,
      phone: null,
      preferred_locales: [],
      tax_exempt: "none",
      test_clock: null
    }
    customers.set(customer.id, customer)
    return customer
  }

  const newIntent = (body: any, status: string, extra: Record<string, unknown> = {}): any => {
    const amount = int(body.amount) ?? 0
    const intent = {
      id: `pi_${token(24)}`,
      object: "payment_intent",
      amount,
      amount_received: status === "succeeded" ? amount : 0,
      capture_method: "automatic_async",
      confirmation_method: "automatic",
      created: nowSeconds(),
      currency: body.currency ?? "usd",
      customer: body.customer ?? null,
      description: body.description ?? null,
      last_payment_error: null,
      latest_charge: status === "succeeded" ? `ch_${token(24)}` : null,
      livemode: false,
      metadata: body.metadata ?? {},
      next_action: null,
      payment_method: body.payment_method ?? null,
      payment_method_types: ["card"],
      setup_future_usage: body.setup_future_usage ?? null,
      status,
      ...extra
    }
    intents.set(intent.id, intent)
    return intent
  }

  const cardError = (body: any, code: string, declineCode: string, message: string): Answer => {
    const lastError = { type: "card_error", code, decline_code: declineCode, message }
    const intent = newIntent(body, "requires_payment_method", { last_payment_error: lastError })
    return stripeError(402, {
      ...lastError,
      payment_intent: intent,
      payment_method: { id: body.payment_method ?? null, object: "payment_method", type: "card" }
    })
  }

  const createSession = (body: any): Answer => {
    if (body.mode !== "payment") return invalid("This fake only serves mode=payment.", "mode")
    const items: Array<any> = Array.isArray(body.line_items) ? body.line_items : []
    if (items.length === 0) return invalid("line_items is required in payment mode.", "line_items", "parameter_missing")
    if (body.customer !== undefined && (body.customer_creation !== undefined || body.customer_email !== undefined)) {
      return invalid("You may only specify one of these parameters: customer, customer_creation, customer_email.")
    }
    if (body.customer !== undefined && !customers.has(body.customer)) {
      return invalid(`No such customer: '${body.customer}'`, "customer", "resource_missing")
    }
    const expiresAt = int(body.expires_at) ?? nowSeconds() + 86_400
    const lifetime = expiresAt - nowSeconds()
    if (lifetime < 1_800 || lifetime > 86_400) {
      return invalid("The `expires_at` timestamp must be between 30 minutes and 24 hours from now.", "expires_at")
    }
    const amounts = items.map((item) => (int(item.price_data?.unit_amount) ?? 0) * (int(item.quantity) ?? 1))
    const total = amounts.reduce((sum, amount) => sum + amount, 0)
    const id = `cs_test_${token(58)}`
    const session = {
      id,
      object: "checkout.session",
      amount_subtotal: total,
      amount_total: total,
      cancel_url: body.cancel_url ?? null,
      client_reference_id: body.client_reference_id ?? null,
      created: nowSeconds(),
      currency: items[0]?.price_data?.currency ?? "usd",
      customer: body.customer ?? null,
      customer_creation: body.customer_creation ?? null,
      customer_details: null,
      customer_email: body.customer_email ?? null,
      expires_at: expiresAt,
      invoice: null,
      invoice_creation: body.invoice_creation === undefined
        ? null
        : { enabled: body.invoice_creation.enabled === "true", invoice_data: { metadata: {} } },
      livemode: false,
      metadata: body.metadata ?? {},
      mode: "payment",
      payment_intent: null,
      payment_method_types: ["card"],
      payment_status: "unpaid",
      status: "open",
      success_url: body.success_url ?? null,
      url: `https://checkout.stripe.com/c/pay/${id}`,
      // Not on Stripe's session object; kept so `completeSession` can build the PaymentIntent from it.
      _payment_intent_data: body.payment_intent_data ?? {}
    }
    sessions.set(id, session)
    return { status: 200, body: session }
  }

  const succeed = (endpoint: StripeEndpoint, id: string | null, body: any): Answer => {
    switch (endpoint) {
      case "POST /v1/checkout/sessions":
        return createSession(body)
      case "POST /v1/customers":
        return { status: 200, body: newCustomer(body) }
      case "POST /v1/billing_portal/sessions":
        if (typeof body.customer !== "string") return invalid("Missing required param: customer.", "customer", "parameter_missing")
        if (!customers.has(body.customer)) return invalid(`No such customer: '${body.customer}'`, "customer", "resource_missing")
        return {
          status: 200,
          body: {
            id: `bps_${token(24)}`,
            object: "billing_portal.session",
            configuration: `bpc_${token(24)}`,
            created: nowSeconds(),
            customer: body.customer,
            livemode: false,
            locale: null,
            on_behalf_of: null,
            return_url: body.return_url ?? null,
            url: `https://billing.stripe.com/p/session/test_${token(40)}`
          }
        }
      case "POST /v1/payment_intents":
        return { status: 200, body: newIntent(body, "succeeded") }
      case "GET /v1/checkout/sessions/:id":
      case "GET /v1/payment_intents/:id": {
        const found = (endpoint === "GET /v1/payment_intents/:id" ? intents : sessions).get(id ?? "")
        return found === undefined
          ? stripeError(404, { type: "invalid_request_error", code: "resource_missing", message: `No such object: '${id}'` })
          : { status: 200, body: found }
      }
    }
  }

  const answer = (endpoint: StripeEndpoint, id: string | null, body: any, reply: FakeStripeReply): Answer | null => {
    switch (reply.kind) {
      case "ok":
        return succeed(endpoint, id, body)
      case "requires_action":
        return {
          status: 200,
          body: newIntent(body, "requires_action", {
            next_action: { type: "use_stripe_sdk", use_stripe_sdk: { type: "three_d_secure_redirect" } }
          })
        }
      case "authentication_required":
        return cardError(body, "authentication_required", "authentication_required",
          "Your card was declined. This transaction requires authentication.")
      case "decline":
        return cardError(body, "card_declined", reply.declineCode ?? "generic_decline", "Your card was declined.")
      case "status":
        return stripeError(reply.status, {
          type: reply.type ?? (reply.status >= 500 ? "api_error" : "invalid_request_error"),
          ...(reply.code === undefined ? {} : { code: reply.code }),
          message: `scripted ${reply.status}`
        })
      case "hang":
      case "drop":
        return null
    }
  }

  const route = (method: string, path: string): { endpoint: StripeEndpoint; id: string | null } | null => {
    const pathname = path.split("?")[0] ?? ""
    const fixed = `${method} ${pathname}`
    if (
      fixed === "POST /v1/checkout/sessions" || fixed === "POST /v1/billing_portal/sessions" ||
      fixed === "POST /v1/customers" || fixed === "POST /v1/payment_intents"
    ) return { endpoint: fixed, id: null }
    const match = /^\/v1\/(checkout\/sessions|payment_intents)\/([A-Za-z0-9_]+)$/.exec(pathname)
    if (method !== "GET" || match === null) return null
    return {
      endpoint: match[1] === "payment_intents" ? "GET /v1/payment_intents/:id" : "GET /v1/checkout/sessions/:id",
      id: match[2] ?? null
    }
  }

  const server = http.createServer((incoming, response) => {
    const chunks: Array<Buffer> = []
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk))
    incoming.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8")
      const method = incoming.method ?? ""
      const path = incoming.url ?? ""
      const routed = route(method, path)
      const keyHeader = incoming.headers["idempotency-key"]
      const idempotencyKey = typeof keyHeader === "string" ? keyHeader : null
      const body = parseStripeForm(method === "GET" ? (path.split("?")[1] ?? "") : raw)
      log.push({ method, path, endpoint: routed?.endpoint ?? null, headers: incoming.headers, idempotencyKey, body, at: Date.now() })
      const send = (result: Answer, replayed = false) => {
        response.writeHead(result.status, {
          "content-type": "application/json",
          "request-id": `req_${token(14)}`,
          ...(idempotencyKey === null ? {} : { "idempotency-key": idempotencyKey }),
          ...(replayed ? { "idempotent-replayed": "true" } : {})
        })
        response.end(JSON.stringify(result.body))
      }
      if (routed === null) {
        return send(stripeError(404, { type: "invalid_request_error", message: `Unrecognized request URL (${method}: ${path}).` }))
      }
      if (incoming.headers.authorization !== `Bearer ${secretKey}`) {
        return send(stripeError(401, { type: "invalid_request_error", message: "Invalid API Key provided." }))
      }
      const fingerprint = `${routed.endpoint}\n${raw}`
      const stored = method === "POST" && idempotencyKey !== null ? idempotency.get(idempotencyKey) : undefined
      if (stored !== undefined) {
        return stored.fingerprint === fingerprint
          ? send(stored.answer, true)
          : send(stripeError(400, {
            type: "idempotency_error",
            message: `Keys for idempotent requests can only be used with the same parameters they were first used with.`
          }))
      }
      const reply = queues.get(routed.endpoint)?.shift() ?? sticky.get(routed.endpoint) ?? { kind: "ok" }
      if (reply.kind === "drop") return void response.socket?.destroy()
      const result = answer(routed.endpoint, routed.id, body, reply)
      if (result === null) return
      if (method === "POST" && idempotencyKey !== null && result.status < 500) {
        idempotency.set(idempotencyKey, { fingerprint, answer: result })
      }
      send(result)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo

  const publicSession = (session: any) => {
    const { _payment_intent_data: _, ...rest } = session
    return structuredClone(rest)
  }

  return {
    host: "127.0.0.1",
    port,
    secretKey,
    processorOptions: (overrides = {}) => ({
      secretKey: Redacted.make(secretKey),
      webhookSecret: Redacted.make(FAKE_WEBHOOK_SECRET),
      apiHost: "127.0.0.1",
      apiPort: port,
      apiProtocol: "http",
      maxNetworkRetries: 1,
      timeoutMs: 5_000,
      ...overrides
    }),
    script: (endpoint, ...replies) => {
      queues.set(endpoint, [...(queues.get(endpoint) ?? []), ...replies])
    },
    always: (endpoint, reply) => {
      if (reply === null) sticky.delete(endpoint)
      else sticky.set(endpoint, reply)
    },
    requests: (endpoint) => log.filter((request) => endpoint === undefined || request.endpoint === endpoint),
    seedCustomer: (email) => newCustomer(email === undefined ? {} : { email }).id,
    completeSession: (sessionId, options = {}) => {
      const session = sessions.get(sessionId)
      if (session === undefined || session.status !== "open") throw new Error(`no open session ${sessionId}`)
      const customer = session.customer ?? newCustomer({ email: session.customer_email ?? undefined }).id
      const intent = newIntent({
        amount: String(session.amount_total),
        currency: session.currency,
        customer,
        payment_method: options.paymentMethodId ?? `pm_${token(24)}`,
        setup_future_usage: session._payment_intent_data.setup_future_usage,
        metadata: session._payment_intent_data.metadata
      }, "succeeded")
      Object.assign(session, {
        customer,
        customer_details: { email: customers.get(customer)?.email ?? null, name: null, phone: null },
        invoice: session.invoice_creation?.enabled === true ? `in_${token(24)}` : null,
        payment_intent: intent.id,
        payment_status: "paid",
        status: "complete"
      })
      return publicSession(session)
    },
    customers: () => [...customers.values()].map((customer) => structuredClone(customer)),
    sessions: () => [...sessions.values()].map(publicSession),
    paymentIntents: () => [...intents.values()].map((intent) => structuredClone(intent)),
    reset: () => {
      queues = new Map()
      sticky = new Map()
      log = []
      customers = new Map()
      sessions = new Map()
      intents = new Map()
      idempotency = new Map()
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** A Stripe event object of the given type around a data object, as Stripe delivers it to a webhook endpoint. */
export const stripeEvent = (type: string, object: unknown, options: { readonly id?: string } = {}) => ({
  id: options.id ?? `evt_${token(24)}`,
  object: "event",
  api_version: Stripe.API_VERSION,
  created: nowSeconds(),
  data: { object },
  livemode: false,
  pending_webhooks: 1,
  request: { id: null, idempotency_key: null },
  type
})

/** A webhook delivery: the raw body and its `Stripe-Signature` header, signed with the SDK's own test helper. */
export const signedWebhook = (
  event: unknown,
  secret: string = FAKE_WEBHOOK_SECRET,
  options: { readonly timestamp?: number } = {}
): { readonly payload: string; readonly header: string } => {
  const payload = JSON.stringify(event)
  const header = Stripe.webhooks.generateTestHeaderString({
    payload,
    secret,
    ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp })
  })
  return { payload, header }
}

/** A signed `checkout.session.completed` webhook for a (completed) Checkout Session object. */
export const checkoutCompletedWebhook = (
  session: unknown,
  secret: string = FAKE_WEBHOOK_SECRET,
  options: { readonly eventId?: string; readonly timestamp?: number } = {}
) => signedWebhook(
  stripeEvent("checkout.session.completed", session, options.eventId === undefined ? {} : { id: options.eventId }),
  secret,
  options.timestamp === undefined ? {} : { timestamp: options.timestamp }
)

/** The fake Stripe as an Effect service, started for a layer's lifetime. */
export class FakeStripe extends Context.Service<FakeStripe, {
  readonly server: FakeStripeServer
  readonly processorOptions: (overrides?: Partial<StripeProcessorOptions>) => StripeProcessorOptions
  readonly script: (endpoint: StripeEndpoint, ...replies: ReadonlyArray<FakeStripeReply>) => Effect.Effect<void>
  readonly always: (endpoint: StripeEndpoint, reply: FakeStripeReply | null) => Effect.Effect<void>
  readonly requests: (endpoint?: StripeEndpoint) => Effect.Effect<ReadonlyArray<FakeStripeRequest>>
  readonly seedCustomer: (email?: string) => Effect.Effect<string>
  readonly completeSession: (sessionId: string, options?: { readonly paymentMethodId?: string }) => Effect.Effect<any>
  readonly reset: Effect.Effect<void>
}>()("test/FakeStripe") {
  /** Starts the server when the layer is built and closes it when the layer is released. */
  static readonly layer: Layer.Layer<FakeStripe> = Layer.effect(
    FakeStripe,
    Effect.map(
      Effect.acquireRelease(Effect.promise(() => startFakeStripe()), (server) => Effect.promise(server.close)),
      (server) => ({
        server,
        processorOptions: server.processorOptions,
        script: (endpoint: StripeEndpoint, ...replies: ReadonlyArray<FakeStripeReply>) =>
          Effect.sync(() => server.script(endpoint, ...replies)),
        always: (endpoint: StripeEndpoint, reply: FakeStripeReply | null) => Effect.sync(() => server.always(endpoint, reply)),
        requests: (endpoint?: StripeEndpoint) => Effect.sync(() => server.requests(endpoint)),
        seedCustomer: (email?: string) => Effect.sync(() => server.seedCustomer(email)),
        completeSession: (sessionId: string, options?: { readonly paymentMethodId?: string }) =>
          Effect.sync(() => server.completeSession(sessionId, options)),
        reset: Effect.sync(server.reset)
      })
    )
  )
}
