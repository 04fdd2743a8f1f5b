/**
 * The console's side of session tokens, for tests: signing keys (EdDSA, ES256, RS256) published as a real JWKS over
 * HTTP on a random port, which a test can rotate or take down, and a signer for session tokens with any claims.
 */
import { Context, Effect, Layer } from "effect"
import { exportJWK, generateKeyPair, SignJWT, type JWK } from "jose"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

type Algorithm = "EdDSA" | "ES256" | "RS256"

interface SigningKey {
  readonly kid: string
  readonly alg: Algorithm
  readonly privateKey: Awaited<ReturnType<typeof generateKeyPair>>["privateKey"]
  readonly jwk: JWK
}

const makeKey = async (kid: string, alg: Algorithm): Promise<SigningKey> => {
  const { privateKey, publicKey } = await generateKeyPair(alg, alg === "EdDSA" ? { crv: "Ed25519" } : {})
  const jwk = await exportJWK(publicKey)
  return { kid, alg, privateKey, jwk: { ...jwk, kid, alg, use: "sig" } }
}

/** The console stand-in. */
export interface FakeConsoleService {
  readonly jwksUrl: string
  readonly issuer: string
  readonly audience: string
  /** Signs a session token; `kid` picks the key (default the first published one). */
  /**
   * Signs a token; `expiresIn` is a span ("10m") or an absolute time (Unix seconds); `issuedAt` an absolute time, or
   * null for a token without `iat` (now by default).
   */
  readonly sign: (
    claims: Record<string, unknown>,
    options?: { kid?: string; expiresIn?: string | number; issuedAt?: number | null; issuer?: string; audience?: string }
  ) => Effect.Effect<string>
  /** Creates a key; `publish` false keeps it out of the JWKS until `publishAll`. */
  readonly addKey: (kid: string, alg: Algorithm, publish: boolean) => Effect.Effect<void>
  readonly publishAll: Effect.Effect<void>
  /** Makes the JWKS endpoint fail (503) or answer again. */
  readonly setDown: (down: boolean) => Effect.Effect<void>
  readonly fetches: () => number
}

/** The console stand-in as a service. */
export class FakeConsole extends Context.Service<FakeConsole, FakeConsoleService>()("FakeConsole") {
  /** A JWKS server with one published EdDSA key `k1`. */
  static readonly layer = Layer.effect(
    FakeConsole,
    Effect.gen(function*() {
      const keys = new Map<string, SigningKey>()
      const published = new Set<string>()
      let down = false
      let fetches = 0
      const server = createServer((_request, response) => {
        fetches += 1
        if (down) return response.writeHead(503).end()
        const body = JSON.stringify({ keys: [...published].map((kid) => keys.get(kid)!.jwk) })
        response.writeHead(200, { "content-type": "application/json" }).end(body)
      })
      yield* Effect.acquireRelease(
        Effect.callback<void>((resume) => {
          server.listen(0, "127.0.0.1", () => resume(Effect.void))
        }),
        () =>
          Effect.callback<void>((resume) => {
            server.close(() => resume(Effect.void))
          })
      )
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`
      const addKey = (kid: string, alg: Algorithm, publish: boolean) =>
        Effect.promise(async () => {
          keys.set(kid, await makeKey(kid, alg))
          if (publish) published.add(kid)
        })
      yield* addKey("k1", "EdDSA", true)
      const issuer = "https://console.example"
      const audience = "arbiter-api"
      return {
        jwksUrl: url,
        issuer,
        audience,
        sign: (claims, options = {}) =>
          Effect.promise(() => {
            const key = keys.get(options.kid ?? "k1")!
            const unsigned = new SignJWT(claims).setProtectedHeader({ alg: key.alg, kid: key.kid })
            if (options.issuedAt !== null) unsigned.setIssuedAt(options.issuedAt)
            return unsigned
              .setIssuer(options.issuer ?? issuer)
              .setAudience(options.audience ?? audience)
              .setExpirationTime(options.expiresIn ?? "10m")
              .sign(key.privateKey)
          }),
        addKey,
        publishAll: Effect.sync(() => keys.forEach((_, kid) => published.add(kid))),
        setDown: (value) => Effect.sync(() => void (down = value)),
        fetches: () => fetches
      }
    })
  )
}
