/**
 * A bare `node:http` server behind the overload guard (src/server/Overload.ts) that holds every request it takes
 * until the test ends its response: what the guard counts and sheds is then in the test's hands.
 */
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { makeCors } from "../../src/http/Cors.js"
import { startOverloadGuard } from "../../src/server/Overload.js"

/** Starts the server with `maxInFlight` and no lag limit; `close` stops the guard, ends what is held and closes. */
export const startGuardedServer = async (maxInFlight: number) => {
  const guard = startOverloadGuard({ maxLagMs: 0, maxInFlight, cors: makeCors([]) })
  const held: Array<ServerResponse> = []
  const server = createServer((request, response) => {
    if (guard.shed(request, response)) return
    request.resume()
    held.push(response)
  })
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening))
  return {
    guard,
    held,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Waits until the server holds more than `count` requests. */
    heldMoreThan: async (count: number) => {
      while (held.length <= count) await new Promise((wake) => setTimeout(wake, 5))
    },
    close: async () => {
      guard.stop()
      held.forEach((response) => response.end())
      await new Promise((closed) => server.close(closed))
    }
  }
}
