/**
 * The baseline for `bench/readyz.ts`: a bare node:http server answering GET /readyz with the same two queries the
 * service's readiness check runs, over a `pg` pool of the same size, with a request id header. No framework.
 */
import { randomUUID } from "node:crypto"
import { createServer } from "node:http"
import pg from "pg"

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })

createServer(async (req, res) => {
  if (req.url?.startsWith("/healthz") === true) {
    res.writeHead(200, { "content-type": "application/json" }).end("{\"status\":\"ok\"}")
    return
  }
  try {
    const present = await pool.query("SELECT to_regclass('effect_sql_migrations') IS NOT NULL AS present")
    const version = present.rows[0].present === true
      ? (await pool.query("SELECT max(migration_id) AS version FROM effect_sql_migrations")).rows[0].version
      : 0
    const body = JSON.stringify({ status: "ready", checks: { database: "ok", migrations: version > 0 ? "applied" : "pending" } })
    res.writeHead(200, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      "x-request-id": `req_${randomUUID().replace(/-/g, "")}`
    }).end(body)
  } catch {
    res.writeHead(503).end()
  }
}).listen(Number(process.env.PORT), process.env.HOST)
