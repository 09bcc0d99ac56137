/**
 * CORS for the routes browser clients call with a bearer credential (MCP, A2A) and for the public
 * discovery documents. Only listed origins are let in; credentials are never allowed (these routes
 * read no cookie), and routes without a policy, the cookie-authenticated ones among them, allow no
 * foreign origin at all. A request from an origin the policy refuses is answered 403 before its
 * handler runs, as MCP asks of a present but invalid Origin.
 */
export interface CorsRoute {
  /** An exact path, or every path under it when it ends with `/`. */
  readonly path: string
  readonly methods: ReadonlyArray<string>
  /** Request headers a page may send beyond the CORS-safelisted ones. */
  readonly requestHeaders: ReadonlyArray<string>
  /** A public document, fetched without a credential: `*` among the origins lets any origin read it. */
  readonly public: boolean
}

export interface CorsOptions {
  /** Exact origins (`https://host[:port]`); `*` counts on public routes only. */
  readonly origins: ReadonlyArray<string>
  readonly routes: ReadonlyArray<CorsRoute>
  /** Response headers a page may read beyond the CORS-safelisted ones. */
  readonly exposedHeaders: ReadonlyArray<string>
  /** How long a browser may keep a preflight's answer. */
  readonly maxAgeSeconds: number
}

/** The request comes from an origin the route's policy refuses. */
export const OriginRefused: unique symbol = Symbol("gateway.OriginRefused")
export type OriginRefused = typeof OriginRefused

export type ResponseHeaders = Readonly<Record<string, string>>

export interface Cors {
  /**
   * What every response to a request of `url` carries: CORS headers, nothing (undefined: the path
   * has no policy), or OriginRefused (the request is answered 403).
   */
  readonly responseHeaders: (url: string, origin: string | undefined, host: string | undefined) => ResponseHeaders | undefined | OriginRefused
  /** The headers of a preflight's 204, or OriginRefused (answered 403). */
  readonly preflightHeaders: (url: string, origin: string) => ResponseHeaders | OriginRefused
}

const ANY_ORIGIN = "*"

const LOOPBACK_HOST = /^(?:localhost|127\.0\.0\.1|\[::1\])(?::\d+)?$/i

/**
 * A page served from a loopback name calling the node under that same name: the origin is the
 * request's own, not a foreign one, whatever the node calls itself in its base URL. Only loopback
 * names count: a page of a rebound name (evil.example resolving to 127.0.0.1) sends its own name
 * as Host and Origin, and that origin stays foreign unless listed (MCP's DNS-rebinding rule).
 */
const ownLoopbackOrigin = (origin: string, host: string | undefined) =>
  host !== undefined && LOOPBACK_HOST.test(host) && (origin === `http://${host}` || origin === `https://${host}`)

export const makeCors = (options: CorsOptions): Cors => {
  const anyOrigin = options.origins.includes(ANY_ORIGIN)
  const exposed = options.exposedHeaders.join(", ")
  // The answer depends on the Origin header wherever an origin is named rather than `*`.
  const varyOnly: ResponseHeaders = Object.freeze({ vary: "Origin" })
  const anyHeaders: ResponseHeaders = Object.freeze({ "access-control-allow-origin": ANY_ORIGIN, "access-control-expose-headers": exposed })
  // One frozen header set per listed origin: answering a request allocates nothing.
  const listed = new Map<string, ResponseHeaders>()
  for (const origin of options.origins) {
    if (origin !== ANY_ORIGIN) {
      listed.set(origin, Object.freeze({ "access-control-allow-origin": origin, vary: "Origin", "access-control-expose-headers": exposed }))
    }
  }

  const routeOf = (url: string): CorsRoute | undefined => {
    for (const route of options.routes) {
      if (route.path.endsWith("/") ? url.startsWith(route.path) : url === route.path) return route
    }
    return undefined
  }
  const opensToAll = (route: CorsRoute) => route.public && anyOrigin

  return {
    responseHeaders: (url, origin, host) => {
      const route = routeOf(url)
      if (route === undefined) return undefined
      if (opensToAll(route)) return anyHeaders
      if (origin === undefined) return varyOnly
      return listed.get(origin) ?? (ownLoopbackOrigin(origin, host) ? varyOnly : OriginRefused)
    },
    preflightHeaders: (url, origin) => {
      const route = routeOf(url)
      if (route === undefined || !(opensToAll(route) || listed.has(origin))) return OriginRefused
      const headers: Record<string, string> = opensToAll(route)
        ? { "access-control-allow-origin": ANY_ORIGIN }
        : { "access-control-allow-origin": origin, vary: "Origin" }
      headers["access-control-allow-methods"] = route.methods.join(", ")
      if (route.requestHeaders.length > 0) headers["access-control-allow-headers"] = route.requestHeaders.join(", ")
      headers["access-control-max-age"] = String(options.maxAgeSeconds)
      return headers
    }
  }
}
