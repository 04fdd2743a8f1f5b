/**
 * A TCP proxy in front of the test database that a test can cut and restore, to show the service failing closed
 * while its database stops answering and recovering, without a restart, when it is back.
 */
import { Effect } from "effect"
import { createServer, connect, type Socket } from "node:net"
import type { AddressInfo } from "node:net"

/** A running proxy. */
export interface TcpProxy {
  readonly port: number
  /** Drops every open connection and refuses new ones. */
  readonly cut: () => void
  /** Accepts and forwards connections again. */
  readonly restore: () => void
}

/** Starts a proxy to host:port for the life of the scope. */
export const tcpProxy = (targetHost: string, targetPort: number) =>
  Effect.acquireRelease(
    Effect.callback<{ proxy: TcpProxy; close: () => void }>((resume) => {
      const sockets = new Set<Socket>()
      let open = true
      const server = createServer((client) => {
        if (!open) return client.destroy()
        const upstream = connect(targetPort, targetHost)
        sockets.add(client)
        sockets.add(upstream)
        client.pipe(upstream)
        upstream.pipe(client)
        const drop = () => {
          client.destroy()
          upstream.destroy()
          sockets.delete(client)
          sockets.delete(upstream)
        }
        client.on("error", drop)
        upstream.on("error", drop)
        client.on("close", drop)
        upstream.on("close", drop)
      })
      server.listen(0, "127.0.0.1", () => {
        const proxy: TcpProxy = {
          port: (server.address() as AddressInfo).port,
          cut: () => {
            open = false
            for (const socket of sockets) socket.destroy()
            sockets.clear()
          },
          restore: () => {
            open = true
          }
        }
        resume(Effect.succeed({
          proxy,
          close: () => {
            proxy.cut()
            server.close()
          }
        }))
      })
    }),
    ({ close }) => Effect.sync(close)
  ).pipe(Effect.map(({ proxy }) => proxy))
