/**
 * A fresh PostgreSQL database for one benchmark run, on `BENCH_DATABASE_URL` (default: the machine's
 * postgres://postgres@127.0.0.1:5432/test), dropped at the end.
 */
import { randomBytes } from "node:crypto"
import pg from "pg"

/** The server URL the benchmarks create their databases on. */
export const benchServerUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"

const admin = async (text: string) => {
  const client = new pg.Client({ connectionString: benchServerUrl })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

/** Creates a database; returns its URL and a function that drops it. */
export const createBenchDatabase = async () => {
  const name = `arbiter_bench_${randomBytes(5).toString("hex")}`
  try {
    await admin(`CREATE DATABASE ${name}`)
  } catch (error) {
    throw new Error(`benchmarks need PostgreSQL at ${benchServerUrl} (set BENCH_DATABASE_URL): ${String(error)}`)
  }
  const url = new URL(benchServerUrl)
  url.pathname = `/${name}`
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) }
}
