/**
 * Organizations for the benchmarks, made through the service's own modules against the benchmark database: each with
 * billing on, an owner key and the credit asked for.
 */
import { Effect, Layer, References } from "effect"
import pg from "pg"
import { AppConfig } from "../../src/config/AppConfig.js"
import { CreditStore } from "../../src/ledger/CreditStore.js"
import { newTransactionId } from "../../src/ids/Ids.js"
import { pgClientLayer } from "../../src/db/PgPool.js"
import { DirectoryLive } from "../../src/Services.js"
import { Organizations } from "../../src/organizations/Organizations.js"

/** A benchmark organization. */
export interface BenchOrganization {
  readonly organizationId: string
  readonly secret: string
}

/** Creates `count` organizations with `creditMicros` each. */
export const seedOrganizations = (databaseUrl: string, count: number, creditMicros: number, label: string) =>
  Effect.runPromise(
    Effect.forEach(
      Array.from({ length: count }, (_, index) => index),
      (index) =>
        Effect.gen(function*() {
          const organizations = yield* Organizations
          const created = yield* organizations.create({
            name: `${label} ${index}`,
            ownerEmail: `${label}-${index}@bench.example`,
            verified: false,
            billing: true
          })
          if (creditMicros > 0) {
            yield* (yield* CreditStore).credit({
              organizationId: created.organization_id,
              id: newTransactionId(),
              kind: "grant",
              amountMicros: creditMicros,
              description: "benchmark credit"
            })
          }
          return { organizationId: created.organization_id, secret: created.key.secret } satisfies BenchOrganization
        }),
      { concurrency: 8 }
    ).pipe(
      Effect.provide(DirectoryLive),
      Effect.provide(Layer.orDie(pgClientLayer({ url: databaseUrl }, { max: 8 }))),
      Effect.provide(AppConfig.layer),
      Effect.provideService(References.MinimumLogLevel, "Warn"),
      Effect.orDie
    )
  )

/**
 * Gives organizations a settled history (`runsEach` completed runs of cost 0 each, so no money moves) and refreshes
 * the planner's statistics, so the benchmark measures a service in use rather than one whose tables are empty.
 */
export const seedHistory = async (databaseUrl: string, organizations: ReadonlyArray<BenchOrganization>, runsEach: number) => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    await client.query(
      `INSERT INTO runs (id, organization_id, origin, idempotency_key, kind, state, input_digest, output_digest, period,
         hold_micros, hold_tokens, hold_credit, held, deadline_at, created_at, settled_at)
       SELECT gen_random_uuid(), o.id, 'runs', 'history-' || n, 'decision', 'completed', md5(o.id || n), md5(n::text),
         date_trunc('month', now() AT TIME ZONE 'UTC')::date, 20000, 400, true, false, now(), now() - n * interval '1 second', now()
       FROM unnest($1::text[]) AS o(id), generate_series(1, $2::int) AS n`,
      [organizations.map((organization) => organization.organizationId), runsEach]
    )
    await client.query("ANALYZE")
  } finally {
    await client.end()
  }
}
