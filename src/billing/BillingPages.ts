/**
 * The billing routes outside the API: the local processor's hosted pages (the checkout page, whose one button
 * completes the purchase; the portal, behind a signed, expiring link), the page a Stripe checkout returns to, and
 * Stripe's webhook (verified with `STRIPE_WEBHOOK_SECRET`, each completed checkout credited exactly once). Pages are
 * plain server-rendered HTML with no external assets.
 */
import { HttpApiBuilder, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Either, Option } from "effect"
import { CurrentRequestId } from "../../schema/Errors.js"
import { AppConfig } from "../AppConfig.js"
import { OrganizationsRepo } from "../organizations/OrganizationsRepo.js"
import { Billing } from "./Billing.js"
import { BillingRepo, type CheckoutRow } from "./BillingRepo.js"
import { CreditStore } from "./CreditStore.js"
import { checkoutPage, escapeHtml, portalPage } from "./LocalPages.js"
import { localCustomerId, localPaymentMethodId, verifyPortalToken } from "./LocalProcessor.js"
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

const notice = (title: string, text: string, status: number) =>
  html(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
    `<body style="font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem">` +
    `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></body></html>`, status)

/** The routes, registered on the API's router. */
export const BillingPagesLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const billing = yield* Billing
    const repo = yield* BillingRepo
    const credit = yield* CreditStore
    const organizations = yield* OrganizationsRepo
    const signingKey = yield* LocalSigningKey
    const local = config.billingProvider === "local"

    const organizationName = (id: string) =>
      Effect.map(organizations.getOrganization(id), Option.match({ onNone: () => id, onSome: (row) => row.name }))

    const localCheckout = (id: string) =>
      Effect.map(repo.checkout(id), Option.filter((row: CheckoutRow) => local && row.processor === "local"))

    const renderCheckout = (row: CheckoutRow) =>
      Effect.map(organizationName(row.organization_id), (name) =>
        html(checkoutPage({
          checkoutId: row.id,
          amountMicros: row.amount_micros,
          organizationName: name,
          expiresAt: row.expires_at,
          state: row.state === "paid" ? "paid" : row.expires_at.getTime() <= Date.now() ? "expired" : "open",
          formAction: `/billing/local/checkout/${encodeURIComponent(row.id)}`
        })))

    const missing = () => Effect.succeed(notice("Checkout not found", "This checkout link is not valid.", 404))

    yield* router.get("/billing/local/checkout/:checkout_id", Effect.gen(function*() {
      const { params } = yield* HttpRouter.RouteContext
      const row = yield* localCheckout(params.checkout_id ?? "")
      return yield* Option.match(row, { onNone: missing, onSome: renderCheckout })
    }))

    yield* router.post("/billing/local/checkout/:checkout_id", Effect.gen(function*() {
      const { params } = yield* HttpRouter.RouteContext
      const row = yield* localCheckout(params.checkout_id ?? "")
      if (Option.isNone(row)) return yield* missing()
      const checkout = row.value
      if (checkout.state === "open" && checkout.expires_at.getTime() > Date.now()) {
        yield* billing.completeCheckout({
          kind: "checkout_completed",
          eventId: `local:${checkout.id}`,
          checkoutId: checkout.id,
          processorRef: checkout.id,
          amountMicros: checkout.amount_micros,
          customerId: localCustomerId(checkout.organization_id),
          paymentMethodId: localPaymentMethodId(checkout.organization_id)
        }, { brand: "Test card", last4: "4242" })
      }
      const after = yield* repo.checkout(checkout.id)
      return yield* renderCheckout(Option.getOrElse(after, () => checkout))
    }))

    yield* router.get("/billing/local/portal/:token", Effect.gen(function*() {
      const { params } = yield* HttpRouter.RouteContext
      const verified = verifyPortalToken(params.token ?? "", signingKey, new Date())
      if (!local || Either.isLeft(verified)) {
        return notice("Link not valid", Either.isLeft(verified) ? verified.left.message : "This portal link is not valid.", 404)
      }
      const organizationId = verified.right
      const [name, settings, transactions, [account]] = yield* Effect.all([
        organizationName(organizationId),
        repo.settings(organizationId),
        credit.transactions(organizationId, 50),
        credit.balances([organizationId])
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
        returnUrl: AppConfig.publicBaseUrl(config)
      }))
    }))

    yield* router.get("/billing/return", Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const url = new URL(request.url, "http://localhost")
      const row = yield* repo.checkout(url.searchParams.get("checkout_id") ?? "")
      if (Option.isNone(row)) return yield* missing()
      return row.value.state === "paid"
        ? notice("Payment received", "Your credit has been added to your balance.", 200)
        : url.searchParams.get("result") === "cancelled"
        ? notice("Checkout cancelled", "No payment was made. You can start a new checkout at any time.", 200)
        : notice("Payment processing", "Your credit is added as soon as the payment is confirmed.", 200)
    }))

    yield* router.post("/billing/stripe/webhook", Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const body = yield* request.text
      const outcome = yield* Effect.either(billing.handleWebhook(body, request.headers["stripe-signature"]))
      if (Either.isRight(outcome)) return yield* HttpServerResponse.json(outcome.right)
      const requestId = yield* CurrentRequestId
      const invalid = outcome.left._tag === "InvalidWebhook"
      return yield* HttpServerResponse.json(
        {
          error: {
            code: invalid ? "invalid_body" : "database_unavailable",
            message: invalid ? outcome.left.message : "the database is not answering",
            request_id: requestId
          }
        },
        { status: invalid ? 400 : 503 }
      )
    }))
  })
)
