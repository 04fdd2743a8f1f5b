/**
 * First start on the embedded database: when no organization exists, create organization `default` with an owner key,
 * print the secret once on stderr, straight to the stream and never as a log line (log lines go to stdout, where log
 * shippers collect and keep them), and write `{organization_id, key_id, secret}` to `DATA_DIR/bootstrap.json` (mode
 * 0600). Never on PostgreSQL, where operators create organizations with the CLI.
 */
import { Effect, Layer, Option } from "effect"
import { chmodSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { AppConfig } from "../config/AppConfig.js"
import { DatabaseKind } from "../db/Sql.js"
import { Organizations } from "./Organizations.js"

const announce = (created: { organization_id: string; key: { secret: string } }, file: string, baseUrl: string) =>
  [
    "",
    `Created organization "default" (${created.organization_id}) with an owner API key holding all nine scopes.`,
    `The key is shown once here and saved to ${file} (mode 0600):`,
    "",
    `  ${created.key.secret}`,
    "",
    "Try it:",
    `  curl -s -H "Authorization: Bearer ${created.key.secret}" ${baseUrl}/v1/keys`,
    ""
  ].join("\n")

/** Runs the bootstrap once the database is ready (a no-op on PostgreSQL or when an organization exists). */
export const BootstrapLive = Layer.effectDiscard(
  Effect.gen(function*() {
    if ((yield* DatabaseKind) !== "embedded") return
    const config = yield* AppConfig
    const organizations = yield* Organizations
    const created = yield* organizations.bootstrap
    if (Option.isNone(created)) return
    const file = join(resolve(config.dataDir), "bootstrap.json")
    writeFileSync(
      file,
      JSON.stringify(
        {
          organization_id: created.value.organization_id,
          key_id: created.value.key.id,
          secret: created.value.key.secret
        },
        null,
        2
      ) + "\n",
      { mode: 0o600 }
    )
    chmodSync(file, 0o600)
    yield* Effect.sync(() => process.stderr.write(`${announce(created.value, file, `http://${config.host}:${config.port}`)}\n`))
  })
)
