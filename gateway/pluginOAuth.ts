/**
 * Spec 4.5's OAuth callback of plugin credentials, `GET /api/v1/plugins/oauth/callback?code&state`:
 * the person's browser comes back from the authorization server, signed in to the app (the state
 * is theirs alone). Invokes `plugin.oauth.callback`; a browser is sent on to the app's integrations
 * page, a client asking for JSON gets the credential.
 */
import { Effect } from "effect"
import type uWS from "uWebSockets.js"
import { invoke } from "../src/Capabilities.ts"
import { OAUTH_CALLBACK_PATH } from "../src/marketplace/OAuth.ts"
import { replyForFailure } from "./errors.ts"
import { route } from "./http.ts"
import type { GatewayOptions } from "./server.ts"

const NO_STORE = { "cache-control": "no-store" }

export const pluginOAuthRoutes = (app: uWS.TemplatedApp, options: Pick<GatewayOptions, "run">) => {
  route(app, "get", OAUTH_CALLBACK_PATH, async (req) => {
    const input = Object.fromEntries(new URLSearchParams(req.query))
    const exit = await options.run(
      Effect.annotateLogs(
        invoke({
          authorization: req.headers.authorization,
          cookie: req.headers.cookie,
          surface: "api",
          capability: "plugin.oauth.callback",
          path: null,
          input: Effect.succeed(input),
          clientAddress: req.remoteAddress,
          trace: req
        }),
        "requestId",
        req.requestId
      )
    )
    if (exit._tag === "Failure") {
      const failure = replyForFailure(exit.cause)
      return { ...failure, headers: { ...failure.headers, ...NO_STORE } }
    }
    const credential = exit.value as { readonly appRoute: string; readonly listingId: string }
    if ((req.headers.accept ?? "").includes("application/json")) return { status: 200, json: credential, headers: NO_STORE }
    const location = `${credential.appRoute}?connected=${encodeURIComponent(credential.listingId)}`
    return { status: 302, headers: { location, ...NO_STORE }, text: "" }
  })
}
