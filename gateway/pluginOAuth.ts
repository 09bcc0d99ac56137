/**
 * Spec 4.5's OAuth callback of plugin credentials, `GET /api/v1/plugins/oauth/callback?code&state`:
 * the person's browser comes back from the authorization server, signed in to the app (the state
 * is theirs alone). Invokes `plugin.oauth.callback`; a client asking for JSON gets the credential
 * or the failure. A browser is sent on to the app: to the page it left for the authorization
 * server (the app names it in the `svc_oauth_return` cookie: the integrations page or a listing's
 * re-authentication page) or else the workspace's integrations page, with `?connected=<listing>`;
 * a failure lands on the page it left with `?oauth_error=<reason>`, which the page puts in words.
 */
import { Effect } from "effect"
import type uWS from "uWebSockets.js"
import { invoke } from "../src/checkpoint/Checkpoint.ts"
import { OAUTH_CALLBACK_PATH } from "../src/marketplace/OAuth.ts"
import { describeFailure, replyForFailure } from "./errors.ts"
import { route } from "./http.ts"
import type { GatewayOptions } from "./options.ts"
import { cookieValue } from "./sso.ts"

const NO_STORE = { "cache-control": "no-store" }

/** Set by the app (path-scoped to the callback, ten minutes) before it sends the person away. */
export const OAUTH_RETURN_COOKIE = "svc_oauth_return"

/** Only the app's integrations pages are places to return to: the cookie cannot send a browser elsewhere. */
const RETURN_ROUTE = /^\/[^/?#\\]+\/[^/?#\\]+\/settings\/integrations(?:\/reauth\/porg_[0-9a-f]{32})?$/

const returnRouteOf = (cookie: string | undefined): string | undefined => {
  const raw = cookieValue(cookie, OAUTH_RETURN_COOKIE)
  if (raw === undefined || raw === "") return undefined
  try {
    const route = decodeURIComponent(raw)
    return RETURN_ROUTE.test(route) ? route : undefined
  } catch {
    return undefined
  }
}

export const pluginOAuthRoutes = (app: uWS.TemplatedApp, options: Pick<GatewayOptions, "run" | "secureCookies">) => {
  const clearReturn = [`${OAUTH_RETURN_COOKIE}=`, `Path=${OAUTH_CALLBACK_PATH}`, "Max-Age=0", "SameSite=Lax", ...(options.secureCookies ? ["Secure"] : [])].join("; ")
  const redirect = (location: string) => ({ status: 302, headers: { location, "set-cookie": clearReturn, ...NO_STORE }, text: "" })

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
    const wantsJson = (req.headers.accept ?? "").includes("application/json")
    const returnRoute = wantsJson ? undefined : returnRouteOf(req.headers.cookie)
    if (exit._tag === "Failure") {
      if (returnRoute === undefined) {
        const failure = replyForFailure(exit.cause)
        return { ...failure, headers: { ...failure.headers, ...NO_STORE } }
      }
      const { code, reason, failure } = describeFailure(exit.cause)
      return { ...redirect(`${returnRoute}?oauth_error=${encodeURIComponent(reason ?? code)}`), ...(failure === undefined ? {} : { failure }) }
    }
    const credential = exit.value as { readonly appRoute: string; readonly listingId: string }
    if (wantsJson) return { status: 200, json: credential, headers: NO_STORE }
    // the page named must be one of the credential's own workspace
    const back = returnRoute !== undefined && (returnRoute === credential.appRoute || returnRoute.startsWith(`${credential.appRoute}/`)) ? returnRoute : credential.appRoute
    return redirect(`${back}?connected=${encodeURIComponent(credential.listingId)}`)
  })
}
