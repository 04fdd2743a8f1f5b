/**
 * Examples of the keys routes for the OpenAPI document, as the service answers them. Plain data that imports
 * nothing: KeysApi.ts checks each against its wire schema where it applies it (`satisfies` the schema's encoded
 * type), and test/openapi/OpenApiDocument.test.ts validates each against the emitted document.
 */

/** The key id every keys example uses. */
export const ExampleKeyId = "key_01a20c15989c7745802fc12a4ef02105"

const owner = "user_77f7047c045a8942fc660d8d30bfcd3b"

/** A key for a CI job that creates and reads runs. */
export const CreateKeyRequestExample = {
  name: "ci-runner",
  scopes: ["runs_write", "runs_read"]
} as const

/** The key {@link CreateKeyRequestExample} creates, as listed and read (no secret). */
export const KeyExample = {
  id: ExampleKeyId,
  name: "ci-runner",
  principal: { type: "user", id: owner },
  scopes: ["runs_read", "runs_write"],
  state: "active",
  secret_prefix: "otsk_af2fdb9f",
  created_by: owner,
  created_at: "2026-11-24T05:44:31Z",
  last_used_at: null,
  revoked_at: null,
  limits: { spend_micros: null, tokens: null, runs_per_minute: null, period: "month" },
  usage: {
    period_start_at: "2026-11-01T00:00:00Z",
    spend_settled_micros: 0,
    spend_reserved_micros: 0,
    spend_remaining_micros: null,
    tokens_settled: 0,
    tokens_reserved: 0,
    tokens_remaining: null
  }
} as const

/** Limits for the CI key: $5 a day, 60 runs a minute. */
export const UpdateKeyRequestExample = {
  limits: { spend_micros: 5_000_000, runs_per_minute: 60, period: "day" }
} as const

/** The key under {@link UpdateKeyRequestExample}'s limits, with a run in flight. */
export const LimitedKeyExample = {
  ...KeyExample,
  last_used_at: "2026-11-24T05:44:22Z",
  limits: { spend_micros: 5_000_000, tokens: null, runs_per_minute: 60, period: "day" },
  usage: {
    period_start_at: "2026-11-24T00:00:00Z",
    spend_settled_micros: 1_284,
    spend_reserved_micros: 20_000,
    spend_remaining_micros: 4_978_716,
    tokens_settled: 612,
    tokens_reserved: 4_096,
    tokens_remaining: null
  }
} as const

/** The create answer: the key with its secret, shown once. */
export const CreatedKeyExample = {
  ...KeyExample,
  secret: "otsk_af2fdb9f2c80e25523eabcd3174bb83f5d1aad261ca37874e4d56ee145457818"
} as const

/** The rotate answer: a new secret; the previous one no longer works. */
export const RotatedKeyExample = {
  ...KeyExample,
  secret_prefix: "otsk_9fdc3f85",
  secret: "otsk_9fdc3f8586380a6b08a646da07f8f23f0501a6095df2aefb11ef2d39b4ebc6c4"
} as const

/** The revoke answer (repeating it answers the same). */
export const RevokedKeyExample = {
  ...KeyExample,
  state: "revoked",
  secret_prefix: "otsk_9fdc3f85",
  revoked_at: "2026-11-24T05:44:32Z"
} as const

/** The list: every key, newest first. */
export const KeyListExample = {
  keys: [
    KeyExample,
    {
      id: "key_01a20c118ed57db9b3f7d2d72986c135",
      name: "owner",
      principal: { type: "user", id: owner },
      scopes: [
        "billing_read", "billing_write", "keys_read", "keys_write", "members_read", "members_write", "runs_read",
        "runs_write", "usage_read"
      ],
      state: "active",
      secret_prefix: "otsk_682ef76d",
      created_by: owner,
      created_at: "2026-11-24T05:40:06Z",
      last_used_at: "2026-11-24T05:44:22Z",
      revoked_at: null,
      limits: KeyExample.limits,
      usage: KeyExample.usage
    }
  ]
} as const
