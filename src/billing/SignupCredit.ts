/**
 * The one-time sign-up credit (spec, Billing): 5,000,000 micro-USD when an organization is created for a verified
 * owner, once per e-mail address. Addresses are compared normalized: trimmed, lower-cased, without a `+tag` in the
 * local part, and for Gmail without dots (googlemail.com counts as gmail.com), so `A.Da+x@GMail.com` and
 * `ada@gmail.com` are one address.
 */

/** The sign-up credit in micro-USD. */
export const SignupCreditMicros = 5_000_000

/** The normalized form of an e-mail address. */
export const normalizeEmail = (email: string): string => {
  const trimmed = email.trim().toLowerCase()
  const at = trimmed.lastIndexOf("@")
  if (at <= 0) return trimmed
  let local = trimmed.slice(0, at)
  let domain = trimmed.slice(at + 1)
  const plus = local.indexOf("+")
  if (plus > 0) local = local.slice(0, plus)
  if (domain === "googlemail.com") domain = "gmail.com"
  if (domain === "gmail.com") local = local.replace(/\./g, "")
  return `${local}@${domain}`
}
