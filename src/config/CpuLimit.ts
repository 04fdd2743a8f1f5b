/**
 * The CPUs this process may use: the container's CPU limit (a cgroup CPU quota) where one is set, else every CPU the
 * process may run on (`os.availableParallelism()`, which follows its CPU affinity). `WORKERS` defaults to it, so a
 * container limited to two CPUs on a 64-core host starts two server processes (and opens two processes' database
 * connections), not 64.
 *
 * cgroup v2: `cpu.max` ("QUOTA PERIOD", or "max PERIOD" for no limit) of the process's cgroup and of each of its
 * ancestors, the smallest limit winning. cgroup v1 (read only where v2 is not mounted): `cpu.cfs_quota_us` (-1 for no
 * limit) over `cpu.cfs_period_us` in the `cpu` controller's hierarchy, likewise up to its root. A limit is rounded up
 * (1.5 CPUs of quota keep two processes busy), never below 1, and never above the CPUs the process may run on. Paths
 * in `/proc/self/cgroup` are those of the cgroup namespace the process was started in: inside a container with a
 * namespace of its own the path is `/` and the files sit at the mount's root; without one the path names the host's
 * hierarchy, absent from the container's mount, and the walk up reaches the mount's root, which is the container's
 * own cgroup.
 */
import { readFileSync } from "node:fs"
import { availableParallelism } from "node:os"
import { join, posix } from "node:path"

/** Reads a file's text; undefined when it cannot be read (missing, no permission). */
export type ReadText = (path: string) => string | undefined

const readText: ReadText = (path) => {
  try {
    return readFileSync(path, "utf8")
  } catch {
    return undefined
  }
}

/** Where cgroup files are looked for: `/` on a real system, a fixture folder in tests. */
export interface CgroupFiles {
  readonly root: string
  readonly read: ReadText
}

const cgroupMount = "sys/fs/cgroup"

/** The cgroup folders from `path` (a cgroup's path inside its hierarchy) up to the hierarchy's root, deepest first. */
const ancestry = (path: string): ReadonlyArray<string> => {
  const folders: Array<string> = []
  let current = posix.normalize(`/${path.trim()}`)
  for (;;) {
    folders.push(current)
    if (current === "/") return folders
    current = posix.dirname(current)
  }
}

/** CPUs of a quota over a period, rounded up and at least 1; undefined when either is not a positive number. */
const cpusOf = (quota: number, period: number): number | undefined =>
  Number.isFinite(quota) && Number.isFinite(period) && quota > 0 && period > 0
    ? Math.max(1, Math.ceil(quota / period))
    : undefined

const smallest = (limits: ReadonlyArray<number | undefined>): number | undefined => {
  const set = limits.filter((limit): limit is number => limit !== undefined)
  return set.length === 0 ? undefined : Math.min(...set)
}

/** The process's cgroup path in the hierarchy whose `/proc/self/cgroup` line `matches`. */
const cgroupPath = (files: CgroupFiles, matches: (hierarchy: string, controllers: ReadonlyArray<string>) => boolean) => {
  const table = files.read(join(files.root, "proc/self/cgroup"))
  if (table === undefined) return undefined
  for (const line of table.split("\n")) {
    const [hierarchy, controllers, ...path] = line.split(":")
    if (hierarchy === undefined || controllers === undefined || path.length === 0) continue
    if (matches(hierarchy, controllers === "" ? [] : controllers.split(","))) return path.join(":")
  }
  return undefined
}

/** The cgroup v2 limit (`cpu.max`), when v2 is mounted and some level sets one. */
export const cgroupV2Cpus = (files: CgroupFiles): number | undefined => {
  const mount = join(files.root, cgroupMount)
  if (files.read(join(mount, "cgroup.controllers")) === undefined) return undefined
  const path = cgroupPath(files, (hierarchy) => hierarchy === "0") ?? "/"
  return smallest(ancestry(path).map((folder) => {
    const [quota, period] = (files.read(join(mount, folder, "cpu.max")) ?? "").trim().split(/\s+/)
    return quota === undefined || quota === "max" ? undefined : cpusOf(Number(quota), Number(period ?? 100_000))
  }))
}

/** The folders the cgroup v1 `cpu` controller is commonly mounted at, under the cgroup mount. */
const v1CpuMounts = ["cpu,cpuacct", "cpuacct,cpu", "cpu"]

/** The cgroup v1 limit (`cpu.cfs_quota_us` over `cpu.cfs_period_us`), when some level of the `cpu` hierarchy sets one. */
export const cgroupV1Cpus = (files: CgroupFiles): number | undefined => {
  const path = cgroupPath(files, (hierarchy, controllers) => hierarchy !== "0" && controllers.includes("cpu")) ?? "/"
  for (const name of v1CpuMounts) {
    const mount = join(files.root, cgroupMount, name)
    if (files.read(join(mount, "cpu.cfs_period_us")) === undefined) continue
    return smallest(ancestry(path).map((folder) => {
      const quota = files.read(join(mount, folder, "cpu.cfs_quota_us"))
      const period = files.read(join(mount, folder, "cpu.cfs_period_us"))
      return quota === undefined || period === undefined ? undefined : cpusOf(Number(quota.trim()), Number(period.trim()))
    }))
  }
  return undefined
}

/** The CPU limit of the process's cgroup (v2, else v1), or undefined when none is set. */
export const cgroupCpus = (files: CgroupFiles): number | undefined => cgroupV2Cpus(files) ?? cgroupV1Cpus(files)

/** The cgroup files under `root` (`/` on a real system). */
export const cgroupFilesAt = (root: string): CgroupFiles => ({ root, read: readText })

/** The CPUs this process may use: its cgroup's limit where set, never more than it may run on. */
export const availableCpus = (
  files: CgroupFiles = cgroupFilesAt("/"),
  parallelism: number = availableParallelism()
): number => {
  const limit = cgroupCpus(files)
  return limit === undefined ? parallelism : Math.max(1, Math.min(limit, parallelism))
}
