/** Serves a uWS app on a free loopback port for a test file. */
import uWS from "uWebSockets.js"

export interface Served {
  readonly port: number
  readonly base: string
  readonly close: () => void
}

export const serve = (app: uWS.TemplatedApp): Promise<Served> =>
  new Promise((resolve, reject) =>
    app.listen("127.0.0.1", 0, (socket) => {
      if (socket === false) return reject(new Error("listen failed"))
      const port = uWS.us_socket_local_port(socket)
      resolve({ port, base: `http://127.0.0.1:${port}`, close: () => uWS.us_listen_socket_close(socket) })
    })
  )
