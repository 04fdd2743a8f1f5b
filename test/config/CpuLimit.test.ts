/**
 * The CPUs a process may use, read from fixture cgroup trees (never this machine's own): cgroup v2 `cpu.max` at the
 * process's cgroup and its ancestors, cgroup v1 CFS quota as the fallback, no limit, and the default of `WORKERS`.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { availableCpus, cgroupCpus, cgroupFilesAt } from "../../src/config/CpuLimit.js"
import { workerCount } from "../../src/server/Workers.js"

const roots: Array<string> = []

/** A fixture root holding `files` (paths relative to `/`). */
const fixture = (files: Readonly<Record<string, string>>): string => {
  const root = mkdtempSync(join(tmpdir(), "arbiter-cgroup-"))
  roots.push(root)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true })
})

const v2 = (cgroup: string, files: Readonly<Record<string, string>>) =>
  fixture({ "proc/self/cgroup": `0::${cgroup}\n`, "sys/fs/cgroup/cgroup.controllers": "cpuset cpu io memory pids\n", ...files })

const v1 = (files: Readonly<Record<string, string>>) =>
  fixture({
    "proc/self/cgroup": "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n",
    ...files
  })

describe("cgroup CPU limit", () => {
  it("cgroup v2: a quota of 2 CPUs in the container's own cgroup (namespace root)", () => {
    const root = v2("/", { "sys/fs/cgroup/cpu.max": "200000 100000\n" })
    assert.strictEqual(cgroupCpus(cgroupFilesAt(root)), 2)
    assert.strictEqual(availableCpus(cgroupFilesAt(root), 64), 2)
  })

  it("cgroup v2: a fractional quota rounds up, and a tiny one still gives 1", () => {
    assert.strictEqual(cgroupCpus(cgroupFilesAt(v2("/", { "sys/fs/cgroup/cpu.max": "150000 100000" }))), 2)
    assert.strictEqual(cgroupCpus(cgroupFilesAt(v2("/", { "sys/fs/cgroup/cpu.max": "10000 100000" }))), 1)
  })

  it("cgroup v2: `max` is no limit, so every CPU the process may run on", () => {
    const root = v2("/", { "sys/fs/cgroup/cpu.max": "max 100000\n" })
    assert.strictEqual(cgroupCpus(cgroupFilesAt(root)), undefined)
    assert.strictEqual(availableCpus(cgroupFilesAt(root), 6), 6)
  })

  it("cgroup v2: the smallest limit of the process's cgroup and its ancestors wins", () => {
    const root = v2("/kubepods.slice/pod1/ctr", {
      "sys/fs/cgroup/cpu.max": "max 100000",
      "sys/fs/cgroup/kubepods.slice/cpu.max": "max 100000",
      "sys/fs/cgroup/kubepods.slice/pod1/cpu.max": "300000 100000",
      "sys/fs/cgroup/kubepods.slice/pod1/ctr/cpu.max": "800000 100000"
    })
    assert.strictEqual(cgroupCpus(cgroupFilesAt(root)), 3)
  })

  it("cgroup v2: a host path absent from the container's mount falls back to the mount's root", () => {
    const root = v2("/system.slice/docker-abc.scope", { "sys/fs/cgroup/cpu.max": "400000 100000" })
    assert.strictEqual(cgroupCpus(cgroupFilesAt(root)), 4)
  })

  it("cgroup v2 wins over a v1 quota also present (hybrid hosts)", () => {
    const root = v2("/", {
      "sys/fs/cgroup/cpu.max": "100000 100000",
      "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "800000",
      "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000"
    })
    assert.strictEqual(cgroupCpus(cgroupFilesAt(root)), 1)
  })

  it("cgroup v1: CFS quota over period, at the process's cgroup", () => {
    const root = v1({
      "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
      "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
      "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "250000\n",
      "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n"
    })
    assert.strictEqual(cgroupCpus(cgroupFilesAt(root)), 3)
    assert.strictEqual(availableCpus(cgroupFilesAt(root), 16), 3)
  })

  it("cgroup v1: a quota at the mount's root (the container's own view), the `cpu` mount name", () => {
    const root = v1({
      "sys/fs/cgroup/cpu/cpu.cfs_quota_us": "50000",
      "sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000"
    })
    assert.strictEqual(cgroupCpus(cgroupFilesAt(root)), 1)
  })

  it("cgroup v1: -1 is no limit", () => {
    const root = v1({
      "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "-1",
      "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000"
    })
    assert.strictEqual(cgroupCpus(cgroupFilesAt(root)), undefined)
    assert.strictEqual(availableCpus(cgroupFilesAt(root), 5), 5)
  })

  it("no cgroup files at all (not Linux): every CPU the process may run on", () => {
    assert.strictEqual(availableCpus(cgroupFilesAt(fixture({})), 7), 7)
  })

  it("a limit above the CPUs the process may run on is capped by them", () => {
    assert.strictEqual(availableCpus(cgroupFilesAt(v2("/", { "sys/fs/cgroup/cpu.max": "1600000 100000" })), 4), 4)
  })

  it("unreadable or malformed values are no limit", () => {
    assert.strictEqual(cgroupCpus(cgroupFilesAt(v2("/", { "sys/fs/cgroup/cpu.max": "garbage" }))), undefined)
    assert.strictEqual(cgroupCpus(cgroupFilesAt(v2("/", { "sys/fs/cgroup/cpu.max": "0 100000" }))), undefined)
  })
})

describe("WORKERS", () => {
  const url = "postgres://postgres@127.0.0.1:5432/test"

  it("defaults to the CPUs the process may use, on PostgreSQL", () => {
    const root = v2("/", { "sys/fs/cgroup/cpu.max": "200000 100000" })
    assert.strictEqual(workerCount({ DATABASE_URL: url }, () => availableCpus(cgroupFilesAt(root), 32)), 2)
  })

  it("an explicit WORKERS wins over the limit; the embedded database always runs one process", () => {
    assert.strictEqual(workerCount({ DATABASE_URL: url, WORKERS: "5" }, () => 2), 5)
    assert.strictEqual(workerCount({}, () => 8), 1)
  })

  it("refuses a WORKERS out of range, naming the setting", () => {
    assert.throws(() => workerCount({ DATABASE_URL: url, WORKERS: "0" }, () => 2), /WORKERS must be 1 to 256/)
  })
})
