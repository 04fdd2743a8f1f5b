/**
 * The local processor's hosted pages as pure functions returning whole HTML documents: the checkout page (open,
 * paid, expired) and the billing portal. They need no external asset and no JavaScript: styles are inline, the
 * pay button is a plain POST form, and a Content-Security-Policy meta tag forbids scripts and remote loads. Every
 * interpolated string goes through `escapeHtml`; amounts are integer micro-USD written as dollars.
 */

/** Escapes the five HTML-significant characters, so text is safe both as element content and as an attribute. */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (character) =>
    character === "&" ? "&amp;" : character === "<" ? "&lt;" : character === ">" ? "&gt;" : character === '"' ? "&quot;" : "&#39;")

/** Micro-USD as dollars: `$25.00`, `-$1,234.50`, and up to six decimals below a cent (`$0.011012`). */
export const formatUsd = (amountMicros: number): string => {
  const micros = Math.trunc(amountMicros)
  const magnitude = Math.abs(micros)
  const whole = String(Math.floor(magnitude / 1_000_000)).replace(/\B(?=(\d{3})+(?!\d))/g, ",")
  const fraction = String(magnitude % 1_000_000).padStart(6, "0")
  const decimals = fraction.endsWith("0000") ? fraction.slice(0, 2) : fraction.replace(/0+$/, "")
  return `${micros < 0 ? "-" : ""}$${whole}.${decimals}`
}

/** A date as `YYYY-MM-DD HH:MM UTC`. */
export const formatUtc = (date: Date): string =>
  Number.isNaN(date.getTime()) ? "unknown" : `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`

/** What the checkout page shows. */
export interface CheckoutPageInput {
  readonly checkoutId: string
  readonly amountMicros: number
  readonly organizationName: string
  readonly expiresAt: Date
  readonly state: "open" | "paid" | "expired"
  /** Where the pay button POSTs. */
  readonly formAction: string
}

/** One row of the portal's transaction table. */
export interface PortalTransaction {
  readonly id: string
  readonly kind: string
  /** Signed: credits positive, usage negative. */
  readonly amountMicros: number
  readonly description: string
  readonly createdAt: Date
}

/** What the portal page shows. */
export interface PortalPageInput {
  readonly organizationName: string
  readonly balanceMicros: number
  readonly paymentMethod: { readonly brand: string; readonly last4: string } | null
  readonly transactions: ReadonlyArray<PortalTransaction>
  /** A link back to the application; shown only when it is an http(s) URL. */
  readonly returnUrl?: string | null
}

const STYLE = `
*{box-sizing:border-box}
body{margin:0;background:#f4f5f7;color:#1d2330;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif}
main{margin:3rem auto;padding:2rem;max-width:30rem;background:#fff;border:1px solid #dfe3ea;border-radius:12px;box-shadow:0 1px 3px rgba(16,24,40,.06)}
main.wide{max-width:52rem}
.eyebrow{margin:0 0 .25rem;color:#5b6475;font-size:.8rem;letter-spacing:.04em;text-transform:uppercase}
h1{margin:0 0 1rem;font-size:1.5rem;line-height:1.25}
h2{margin:0 0 .5rem;font-size:1rem;color:#5b6475;font-weight:600}
.amount{margin:.5rem 0 1.25rem;font-size:2.5rem;font-weight:700;letter-spacing:-.02em}
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem;margin:0 0 1.5rem;font-size:.9rem}
dt{color:#5b6475}dd{margin:0;overflow-wrap:anywhere}
code{font:.85em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
button{width:100%;padding:.8rem 1rem;border:0;border-radius:8px;background:#3451d1;color:#fff;font:inherit;font-weight:600;cursor:pointer}
button:hover{background:#2a42b0}button:focus-visible{outline:3px solid #9fb1ff;outline-offset:2px}
.note{margin:1.25rem 0 0;color:#5b6475;font-size:.85rem}
.status{padding:.75rem 1rem;border-radius:8px}
.status.paid{background:#e8f6ee;color:#17613a}.status.expired{background:#fdf0e6;color:#8a4510}
.summary{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:1.5rem;margin-bottom:2rem}
.summary .amount{margin:0;font-size:2rem}
table{width:100%;border-collapse:collapse;font-size:.9rem}
th,td{padding:.6rem .5rem;border-bottom:1px solid #e7eaf0;text-align:left;vertical-align:top}
th{color:#5b6475;font-weight:600}
.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
.credit{color:#17613a}.debit{color:#1d2330}
.ref{display:block;color:#5b6475}
a{color:#3451d1}
`

const htmlDocument = (title: string, body: string): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${body}
</body>
</html>
`

const LOCAL_NOTE = `<p class="note">Local test processor: no card is charged and no money moves. ` +
  `It exists for development and demos.</p>`

/** The hosted checkout page: a single "Pay $25.00" button while open, a confirmation once paid, a notice once expired. */
export const checkoutPage = (input: CheckoutPageInput): string => {
  const amount = formatUsd(input.amountMicros)
  const organization = escapeHtml(input.organizationName)
  const details = `<dl>
<dt>Organization</dt><dd>${organization}</dd>
<dt>Checkout</dt><dd><code>${escapeHtml(input.checkoutId)}</code></dd>
<dt>${input.state === "expired" ? "Expired" : "Expires"}</dt><dd>${escapeHtml(formatUtc(input.expiresAt))}</dd>
</dl>`
  switch (input.state) {
    case "open":
      return htmlDocument(`Pay ${amount} – Arbiter credit`, `<main>
<p class="eyebrow">Arbiter · Buy credit</p>
<h1>Add credit to ${organization}</h1>
<p class="amount">${amount}</p>
${details}
<form method="post" action="${escapeHtml(input.formAction)}">
<input type="hidden" name="checkout_id" value="${escapeHtml(input.checkoutId)}">
<button type="submit" id="pay">Pay ${amount}</button>
</form>
${LOCAL_NOTE}
</main>`)
    case "paid":
      return htmlDocument(`Payment received – Arbiter credit`, `<main>
<p class="eyebrow">Arbiter · Buy credit</p>
<h1>Payment received</h1>
<p class="amount">${amount}</p>
<p class="status paid" role="status">${amount} was added to the credit of ${organization}.</p>
${details}
${LOCAL_NOTE}
</main>`)
    case "expired":
      return htmlDocument(`Checkout expired – Arbiter credit`, `<main>
<p class="eyebrow">Arbiter · Buy credit</p>
<h1>This checkout has expired</h1>
<p class="amount">${amount}</p>
<p class="status expired" role="status">No payment was taken. Start a new purchase from the billing settings.</p>
${details}
${LOCAL_NOTE}
</main>`)
  }
}

const KIND_LABELS: Readonly<Record<string, string>> = {
  signup_credit: "Sign-up credit",
  purchase: "Purchase",
  auto_recharge: "Auto-recharge",
  grant: "Grant",
  usage: "Usage",
  refund: "Refund"
}

const transactionRow = (transaction: PortalTransaction): string => `<tr>
<td>${escapeHtml(formatUtc(transaction.createdAt))}</td>
<td>${escapeHtml(transaction.description)}<code class="ref">${escapeHtml(transaction.id)}</code></td>
<td>${escapeHtml(KIND_LABELS[transaction.kind] ?? transaction.kind)}</td>
<td class="num ${transaction.amountMicros >= 0 ? "credit" : "debit"}">${
  transaction.amountMicros > 0 ? "+" : ""
}${formatUsd(transaction.amountMicros)}</td>
</tr>`

const safeLink = (url: string | null | undefined): string | null => {
  if (url === null || url === undefined) return null
  try {
    const parsed = new URL(url)
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.toString() : null
  } catch {
    return null
  }
}

/** The billing portal: balance, the saved payment method, and the transactions in a table (newest first as given). */
export const portalPage = (input: PortalPageInput): string => {
  const organization = escapeHtml(input.organizationName)
  const method = input.paymentMethod === null
    ? `<p>No saved payment method. One is saved with the next purchase.</p>`
    : `<p>${escapeHtml(input.paymentMethod.brand)} ending in ${escapeHtml(input.paymentMethod.last4)}</p>`
  const rows = input.transactions.length === 0
    ? `<tr><td colspan="4">No transactions yet.</td></tr>`
    : input.transactions.map(transactionRow).join("\n")
  const back = safeLink(input.returnUrl)
  return htmlDocument(`Billing – ${input.organizationName}`, `<main class="wide">
<p class="eyebrow">Arbiter · Billing portal</p>
<h1>${organization}</h1>
<div class="summary">
<section><h2>Balance</h2><p class="amount" id="balance">${formatUsd(input.balanceMicros)}</p></section>
<section><h2>Payment method</h2>${method}</section>
</div>
<section>
<h2>Transactions</h2>
<table>
<thead><tr><th scope="col">Date</th><th scope="col">Description</th><th scope="col">Type</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</section>
${back === null ? "" : `<p class="note"><a href="${escapeHtml(back)}">Back to Arbiter</a></p>`}
${LOCAL_NOTE}
</main>`)
}
