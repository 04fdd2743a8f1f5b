/**
 * The billing routes outside the API: the local processor's hosted pages (the checkout page, whose one button
 * completes the purchase; the portal, behind a signed, expiring link), the page a Stripe checkout returns to, and
 * Stripe's webhook (verified with `STRIPE_WEBHOOK_SECRET`, each completed checkout credited exactly once). Pages are
 * plain server-rendered HTML with no external assets.
 */
import { Effect, Option, type Redacted, Result } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { CurrentRequestId } from "../../schema/Errors.js"
import { AppConfig, type Settings } from "../config/AppConfig.js"
import { Billing, type BillingService } from "./Billing.js"
import { BillingRepo, type BillingRepoService } from "./BillingRepo.js"
import type { CheckoutRow } from "./BillingRows.js"
import { checkoutPage, escapeHtml, portalPage } from "./LocalPages.js"
import { localCustomerId, localPaymentMethodId, verifyCheckoutToken, verifyPortalToken } from "./LocalProcessor.js"
import { OrganizationNames, type OrganizationNamesService } from "./OrganizationNames.js"
import { LocalSigningKey } from "./PaymentProcessorLive.js"

/** The paths these routes serve (for the boundary's 405 detection). */
export const BillingPagePaths = [
  "/billing/local/checkout/:checkout_id",
  "/billing/local/portal/:token",
  "/billing/return",
  "/billing/stripe/webhook"
] as const

const html = (body: string, status = 200) =>
  HttpServerResponse.text(body, {
    status,
    contentType: "text/html; charset=utf-8",
    headers: { "cache-control": "no-store", "x-frame-options": "DENY" }
  })

/** Our checkout ids: `chk_` + 32 hex (anything else is no checkout, and is never looked up). */
const CheckoutIdPattern = /^chk_[0-9a-f]{32}$/

/**
 * Whether a POST to a local page comes from a page of this service. A browser says where a form was submitted from
 * in `Sec-Fetch-Site` (the page's own `no-referrer` policy makes its `Origin` "null", so that header alone cannot
 * tell); an older browser names the page's origin in `Origin`; a client that sends neither (curl, a test) is not a
 * browser being misused by another site.
 */
const sameOrigin = (headers: HttpServerRequest.HttpServerRequest["headers"], publicBaseUrl: string): boolean => {
  const site = headers["sec-fetch-site"]
  if (site !== undefined) return site === "same-origin" || site === "none"
  const origin = headers["origin"]
  if (origin === undefined) return true
  const host = headers["host"]
  return origin === new URL(publicBaseUrl).origin || (host !== undefined && (origin === `http://${host}` || origin === `https://${host}`))
}

const notice = (title: string, text: string, status: number) =>
  html(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
    `<body style="font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem">` +
    `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>`, status)

/** What the pages stand on. */
interface Pages {
  readonly config: Settings
  readonly billing: BillingService
  readonly repo: BillingRepoService
  readonly organizations: OrganizationNamesService
  readonly signingKey: Redacted.Redacted
  /** Whether the local processor is the one configured (its pages answer only then). */
  readonly local: boolean
}

const organizationName = (pages: Pages, id: string) =>
  Effect.map(pages.organizations.nameOf(id), Option.getOrElse(() => id))

/** A local checkout, found only with its link's token (a wrong or missing token finds nothing). */
const localCheckout = (pages: Pages, id: string, token: string) =>
  !pages.local || !CheckoutIdPattern.test(id) || !verifyCheckoutToken(id, token, pages.signingKey)
    ? Effect.succeed(Option.none<CheckoutRow>())
    : Effect.map(pages.repo.checkout(id), Option.filter((row: CheckoutRow) => row.processor === "local"))

const linkToken = HttpServerRequest.HttpServerRequest.useSync((request) =>
  new URL(request.url, "http://localhost").searchParams.get("token") ?? "")

const renderCheckout = (pages: Pages, row: CheckoutRow, token: string) =>
  Effect.map(organizationName(pages, row.organization_id), (name) =>
    html(checkoutPage({
      checkoutId: row.id,
      amountMicros: row.amount_micros,
      organizationName: name,
      expiresAt: row.expires_at,
      state: row.state === "paid" ? "paid" : row.expires_at.getTime() <= Date.now() ? "expired" : "open",
      formAction: `/billing/local/checkout/${encodeURIComponent(row.id)}?token=${encodeURIComponent(token)}`
    })))

const missing = () => Effect.succeed(notice("Checkout not found", "This checkout link is not valid.", 404))

/** `GET /billing/local/checkout/:checkout_id`: the local checkout page. */
const showCheckout = (pages: Pages) =>
  Effect.gen(function*() {
    const { params } = yield* HttpRouter.RouteContext
    const token = yield* linkToken
    const row = yield* localCheckout(pages, params.checkout_id ?? "", token)
    return yield* Option.match(row, { onNone: missing, onSome: (found) => renderCheckout(pages, found, token) })
  })

/** `POST /billing/local/checkout/:checkout_id`: the page's button, which completes the purchase. */
const payCheckout = (pages: Pages) =>
  Effect.gen(function*() {
    const { params } = yield* HttpRouter.RouteContext
    const request = yield* HttpServerRequest.HttpServerRequest
    if (!sameOrigin(request.headers, AppConfig.publicBaseUrl(pages.config))) {
      return notice("Payment refused", "This checkout can only be paid from its own page.", 403)
    }
    const token = yield* linkToken
    const row = yield* localCheckout(pages, params.checkout_id ?? "", token)
    if (Option.isNone(row)) return yield* missing()
    const checkout = row.value
    if (checkout.state === "open" && checkout.expires_at.getTime() > Date.now()) {
      yield* pages.billing.completeCheckout({
        kind: "checkout_completed",
        eventId: `local:${checkout.id}`,
        checkoutId: checkout.id,
        processorRef: checkout.id,
        amountMicros: checkout.amount_micros,
        customerId: localCustomerId(checkout.organization_id),
        paymentMethodId: localPaymentMethodId(checkout.organization_id)
      }, { brand: "Test card", last4: "4242" }, "local")
    }
    const after = yield* pages.repo.checkout(checkout.id)
    return yield* renderCheckout(pages, Option.getOrElse(after, () => checkout), token)
  })

/** `GET /billing/local/portal/:token`: the local portal, behind its signed, expiring link. */
const showPortal = (pages: Pages) =>
  Effect.gen(function*() {
    const { params } = yield* HttpRouter.RouteContext
    const verified = verifyPortalToken(params.token ?? "", pages.signingKey, new Date())
    if (!pages.local || Result.isFailure(verified)) {
      return notice("Link not valid", Result.isFailure(verified) ? verified.failure.message : "This portal link is not valid.", 404)
    }
    const organizationId = verified.success
    const [name, settings, transactions, account] = yield* Effect.all([
      organizationName(pages, organizationId),
      pages.repo.settings(organizationId),
      pages.repo.transactions(organizationId, 50),
      pages.repo.account(organizationId)
    ])
    return html(portalPage({
      organizationName: name,
      balanceMicros: account?.balance_micros ?? 0,
      paymentMethod: settings.payment_method_id === null
        ? null
        : { brand: settings.payment_method_brand ?? "Card", last4: settings.payment_method_last4 ?? "····" },
      transactions: transactions.map((row) => ({
        id: row.id,
        kind: row.kind,
        amountMicros: row.amount_micros,
        description: row.description,
        createdAt: row.created_at
      })),
      returnUrl: AppConfig.publicBaseUrl(pages.config)
    }))
  })

/** `GET /billing/return`: where a processor's checkout sends the customer back. */
const checkoutReturn = (pages: Pages) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const url = new URL(request.url, "http://localhost")
    const checkoutId = url.searchParams.get("checkout_id") ?? ""
    const row = CheckoutIdPattern.test(checkoutId) ? yield* pages.repo.checkout(checkoutId) : Option.none<CheckoutRow>()
    if (Option.isNone(row)) return yield* missing()
    return row.value.state === "paid"
      ? notice("Payment received", "Your credit has been added to your balance.", 200)
      : url.searchParams.get("result") === "cancelled"
      ? notice("Checkout cancelled", "No payment was made. You can start a new checkout at any time.", 200)
      : notice("Payment processing", "Your credit is added as soon as the payment is confirmed.", 200)
  })

/** `POST /billing/stripe/webhook`: Stripe's events, answered in the contract's envelope when refused. */
const stripeWebhook = (pages: Pages) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const body = yield* request.text
    const outcome = yield* Effect.result(pages.billing.handleWebhook(body, request.headers["stripe-signature"]))
    if (Result.isSuccess(outcome)) return yield* HttpServerResponse.json(outcome.success)
    const requestId = yield* CurrentRequestId
    const invalid = outcome.failure._tag === "InvalidWebhook"
    return yield* HttpServerResponse.json(
      {
        error: {
          code: invalid ? "invalid_body" : "database_unavailable",
          message: invalid ? outcome.failure.message : "the database is not answering",
          request_id: requestId
        }
      },
      { status: invalid ? 400 : 503 }
    )
  })

/** The routes, registered on the server's router. */
export const BillingPagesLive = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const pages: Pages = {
      config,
      billing: yield* Billing,
      repo: yield* BillingRepo,
      organizations: yield* OrganizationNames,
      signingKey: yield* LocalSigningKey,
      local: config.billingProvider === "local"
    }
    yield* router.add("GET", "/billing/local/checkout/:checkout_id", showCheckout(pages))
    yield* router.add("POST", "/billing/local/checkout/:checkout_id", payCheckout(pages))
    yield* router.add("GET", "/billing/local/portal/:token", showPortal(pages))
    yield* router.add("GET", "/billing/return", checkoutReturn(pages))
    yield* router.add("POST", "/billing/stripe/webhook", stripeWebhook(pages))
  })
)
