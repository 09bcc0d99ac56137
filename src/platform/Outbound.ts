/**
 * The one guard of outbound HTTP: every call the platform makes to an address a user gave (a
 * webhook step, a marketplace plugin) goes through `request`, which resolves the host, refuses it
 * when any of its addresses lies in a range the node must not reach on a user's behalf (loopback,
 * private, link-local, cloud metadata, ...) unless the operator allowed it (`OUTBOUND_ALLOW`), and
 * then connects to the addresses it checked, never to a second DNS answer (rebinding). Clients that
 * take a fetch (the model providers, OpenID Connect, MCP) are given `checkedFetch`, the same guard
 * with an answer that streams. Neither follows a redirect: a 3xx is the answer, so no redirect
 * leads where the check did not look.
 */
import { Context, Duration, Effect, Either, Layer, Schema } from "effect"
import { lookup as dnsLookup } from "node:dns/promises"
import * as http from "node:http"
import * as https from "node:https"
import { BlockList, isIP, type LookupFunction } from "node:net"
import { Readable } from "node:stream"

// ---------------------------------------------------------------------------------------------
// The address check (pure)

export const refusedRangeNames = ["metadata", "loopback", "unspecified", "private", "link-local", "multicast", "broadcast", "reserved"] as const
/** Why an address is refused; `undefined` from `refusedRange` means it is a public address. */
export type RefusedRange = (typeof refusedRangeNames)[number]

/** The two 16-bit groups of a dotted IPv4 address, for writing it inside an IPv6 prefix. */
const hexGroups = (ipv4: string): string => {
  const [a, b, c, d] = ipv4.split(".").map(Number)
  return `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
}

/**
 * The ranges, in the order they name an address (the metadata hosts before the link-local range
 * that holds one of them; `::1` loopback before `::/96`). Each IPv4 range also covers its IPv6
 * spellings: IPv4-mapped `::ffff:a.b.c.d` (BlockList matches those against IPv4 rules itself),
 * NAT64 `64:ff9b::a.b.c.d` and 6to4 `2002:aabb:ccdd::`; IPv4-compatible `::a.b.c.d`, deprecated,
 * is refused whole as reserved.
 */
const rangeTable: ReadonlyArray<{ readonly range: RefusedRange; readonly ipv4: ReadonlyArray<string>; readonly ipv6: ReadonlyArray<string> }> = [
  // AWS, GCP, Azure, Oracle: 169.254.169.254; AWS over IPv6: fd00:ec2::254; Alibaba: 100.100.100.200
  { range: "metadata", ipv4: ["169.254.169.254/32", "100.100.100.200/32"], ipv6: ["fd00:ec2::254/128"] },
  { range: "loopback", ipv4: ["127.0.0.0/8"], ipv6: ["::1/128"] },
  { range: "unspecified", ipv4: ["0.0.0.0/8"], ipv6: ["::/128"] },
  {
    range: "private",
    // 100.64/10: carrier-grade NAT, the provider's own network
    ipv4: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"],
    // unique local; site-local (deprecated, still routed privately); NAT64 for local use
    ipv6: ["fc00::/7", "fec0::/10", "64:ff9b:1::/48"]
  },
  { range: "link-local", ipv4: ["169.254.0.0/16"], ipv6: ["fe80::/10"] },
  { range: "multicast", ipv4: ["224.0.0.0/4"], ipv6: ["ff00::/8"] },
  { range: "broadcast", ipv4: ["255.255.255.255/32"], ipv6: [] },
  {
    range: "reserved",
    // IETF assignments, documentation, benchmarking, the old 6to4 relay anycast, class E
    ipv4: ["192.0.0.0/24", "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "198.18.0.0/15", "192.88.99.0/24", "240.0.0.0/4"],
    // IPv4-compatible; discard; Teredo (its IPv4 is obfuscated, so not checkable); documentation
    ipv6: ["::/96", "100::/64", "2001::/32", "2001:db8::/32", "3fff::/20"]
  }
]

const subnetOf = (cidr: string): { readonly network: string; readonly prefix: number } => {
  const [network, prefix] = cidr.split("/")
  return { network, prefix: Number(prefix) }
}

const rangeLists: ReadonlyArray<{ readonly range: RefusedRange; readonly list: BlockList }> = rangeTable.map(({ range, ipv4, ipv6 }) => {
  const list = new BlockList()
  for (const cidr of ipv4) {
    const { network, prefix } = subnetOf(cidr)
    list.addSubnet(network, prefix, "ipv4")
    list.addSubnet(`64:ff9b::${hexGroups(network)}`, 96 + prefix, "ipv6")
    list.addSubnet(`2002:${hexGroups(network)}::`, 16 + prefix, "ipv6")
  }
  for (const cidr of ipv6) {
    const { network, prefix } = subnetOf(cidr)
    list.addSubnet(network, prefix, "ipv6")
  }
  return { range, list }
})

/** An IP address without its IPv6 zone (`fe80::1%eth0`), which BlockList would not match. */
const plainAddress = (address: string): string => address.replace(/%.*$/, "")

const familyOf = (address: string): "ipv4" | "ipv6" => (isIP(address) === 4 ? "ipv4" : "ipv6")

/**
 * The refused range an IP address lies in, or `undefined` for a public address. Anything that is
 * not an IP address is `reserved`: the guard never lets through what it cannot read.
 */
export const refusedRange = (address: string): RefusedRange | undefined => {
  const plain = plainAddress(address)
  if (isIP(plain) === 0) return "reserved"
  return rangeLists.find(({ list }) => list.check(plain, familyOf(plain)))?.range
}

// ---------------------------------------------------------------------------------------------
// The operator's allow-list (OUTBOUND_ALLOW)

/** One entry of `OUTBOUND_ALLOW`: an address or a CIDR range, or a host name (exact, no wildcard). */
export type OutboundAllowEntry =
  | { readonly kind: "subnet"; readonly network: string; readonly prefix: number; readonly family: "ipv4" | "ipv6" }
  | { readonly kind: "host"; readonly name: string }

const hostNamePattern = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/

const allowEntry = (entry: string): OutboundAllowEntry => {
  const [rawNetwork, rawPrefix, ...rest] = entry.split("/")
  const network = rawNetwork.replace(/^\[(.*)\]$/, "$1")
  const version = isIP(network)
  if (version !== 0 && rest.length === 0) {
    const bits = version === 4 ? 32 : 128
    const prefix = rawPrefix === undefined ? bits : /^\d{1,3}$/.test(rawPrefix) ? Number(rawPrefix) : Number.NaN
    if (prefix >= 0 && prefix <= bits) return { kind: "subnet", network, prefix, family: version === 4 ? "ipv4" : "ipv6" }
  }
  const name = entry.toLowerCase().replace(/\.$/, "")
  if (rawPrefix === undefined && version === 0 && hostNamePattern.test(name) && !/^[\d.]+$/.test(name)) return { kind: "host", name }
  throw new Error(`OUTBOUND_ALLOW entries must be addresses, CIDR ranges or host names (127.0.0.1, 10.0.0.0/8, fd00::/8, hooks.internal), got '${entry}'`)
}

/** `OUTBOUND_ALLOW`: comma-separated addresses, CIDR ranges and host names; unset allows nothing. */
export const parseOutboundAllow = (value: string | undefined): ReadonlyArray<OutboundAllowEntry> =>
  (value ?? "").split(",").map((entry) => entry.trim()).filter((entry) => entry !== "").map(allowEntry)

/** The allow-list, compiled: whether an address in a refused range may be reached anyway. */
export interface OutboundAllowance {
  readonly allows: (host: string, address: string, range: RefusedRange) => boolean
}

/**
 * A metadata address is opened only by naming it exactly (`169.254.169.254`): allowing a wider
 * range (`169.254.0.0/16` for a link-local service) or a host name must not hand the node's cloud
 * credentials to whoever can make a webhook.
 */
export const makeAllowance = (entries: ReadonlyArray<OutboundAllowEntry>): OutboundAllowance => {
  const subnets = new BlockList()
  const exact = new BlockList()
  const hosts = new Set<string>()
  for (const entry of entries) {
    if (entry.kind === "host") {
      hosts.add(entry.name)
      continue
    }
    subnets.addSubnet(entry.network, entry.prefix, entry.family)
    if (entry.prefix === (entry.family === "ipv4" ? 32 : 128)) exact.addAddress(entry.network, entry.family)
  }
  return {
    allows: (host, address, range) => {
      const plain = plainAddress(address)
      if (isIP(plain) === 0) return false
      if (range === "metadata") return exact.check(plain, familyOf(plain))
      return hosts.has(host.toLowerCase().replace(/\.$/, "")) || subnets.check(plain, familyOf(plain))
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The policy service and the checked request

export interface ResolvedAddress {
  readonly address: string
  readonly family: 4 | 6
}

/** Every address a host name resolves to (the system resolver, /etc/hosts included). */
export type Resolver = (host: string) => Promise<ReadonlyArray<ResolvedAddress>>

export const systemResolver: Resolver = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }))

export interface OutboundPolicyService {
  readonly allowance: OutboundAllowance
  readonly resolve: Resolver
}

/** The node's outbound policy: the operator's allow-list and the resolver (tests inject one). */
export class OutboundPolicy extends Context.Tag("svc/OutboundPolicy")<OutboundPolicy, OutboundPolicyService>() {}

export const makePolicy = (entries: ReadonlyArray<OutboundAllowEntry>, resolve: Resolver = systemResolver): OutboundPolicyService => ({
  allowance: makeAllowance(entries),
  resolve
})

export const layer = (entries: ReadonlyArray<OutboundAllowEntry>): Layer.Layer<OutboundPolicy> => Layer.succeed(OutboundPolicy, makePolicy(entries))

/** A URL as errors state it: without credentials it may carry (`https://user:pass@...`). */
export const shownUrl = (url: string): string => {
  if (!URL.canParse(url)) return url
  const parsed = new URL(url)
  parsed.username = ""
  parsed.password = ""
  return parsed.href
}

/** Not sent: the URL is not http(s), or its host is (or resolves to) an address the node may not reach. */
export class OutboundRefused extends Schema.TaggedError<OutboundRefused>()("OutboundRefused", {
  url: Schema.String,
  host: Schema.String,
  /** The refused address, when an address was refused. */
  address: Schema.optional(Schema.String),
  reason: Schema.Literal("invalid_url", "scheme", ...refusedRangeNames)
}) {
  override get message() {
    if (this.reason === "invalid_url") return `refused to call '${this.url}': not a URL`
    if (this.reason === "scheme") return `refused to call '${this.url}': only http and https URLs may be called`
    const resolved = this.address === this.host ? this.host : `${this.host} (${this.address})`
    return `refused to call '${this.url}': ${resolved} is a ${this.reason} address; the operator may allow it with OUTBOUND_ALLOW`
  }
}

/** No answer in time (resolution, connection and the whole response included). */
export class OutboundTimeout extends Schema.TaggedError<OutboundTimeout>()("OutboundTimeout", {
  url: Schema.String,
  timeoutMs: Schema.Number
}) {
  override get message() {
    return `'${this.url}' did not answer within ${this.timeoutMs} ms`
  }
}

/** The answer was longer than the caller takes; it was cut off there. */
export class OutboundResponseTooLarge extends Schema.TaggedError<OutboundResponseTooLarge>()("OutboundResponseTooLarge", {
  url: Schema.String,
  maxBytes: Schema.Number
}) {
  override get message() {
    return `'${this.url}' answered more than ${this.maxBytes} bytes`
  }
}

/** The host did not resolve, or the connection failed or broke before the answer was whole. */
export class OutboundConnectionFailed extends Schema.TaggedError<OutboundConnectionFailed>()("OutboundConnectionFailed", {
  url: Schema.String,
  /** Node's error code (`ENOTFOUND`, `ECONNREFUSED`, `ECONNRESET`, ...), when it gave one. */
  code: Schema.optional(Schema.String),
  message: Schema.String
}) {}

export type OutboundError = OutboundRefused | OutboundTimeout | OutboundResponseTooLarge | OutboundConnectionFailed

/** A URL checked against the policy, with the addresses the connection is pinned to. */
export interface CheckedTarget {
  readonly url: URL
  readonly addresses: ReadonlyArray<ResolvedAddress>
}

const errorCode = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined

/** An http(s) URL, its host (brackets off an IPv6 literal) and how a refusal shows it; else refused. */
const httpTarget = (url: string): Effect.Effect<{ readonly shown: string; readonly parsed: URL; readonly host: string }, OutboundRefused> => {
  const shown = shownUrl(url)
  if (!URL.canParse(url)) return Effect.fail(new OutboundRefused({ url: shown, host: "", reason: "invalid_url" }))
  const parsed = new URL(url)
  const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1")
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return Effect.fail(new OutboundRefused({ url: shown, host, reason: "scheme" }))
  return Effect.succeed({ shown, parsed, host })
}

/**
 * Resolves the URL's host (all its addresses) and refuses it when any address lies in a refused
 * range the operator did not allow: one bad answer among good ones is enough, as the connection
 * could go to any of them.
 */
export const check = (url: string): Effect.Effect<CheckedTarget, OutboundRefused | OutboundConnectionFailed, OutboundPolicy> =>
  Effect.gen(function* () {
    const { shown, parsed, host } = yield* httpTarget(url)
    const policy = yield* OutboundPolicy
    const literal = isIP(host)
    const addresses: ReadonlyArray<ResolvedAddress> =
      literal !== 0
        ? [{ address: host, family: literal === 6 ? 6 : 4 }]
        : yield* Effect.tryPromise({
            try: () => policy.resolve(host),
            catch: (error) => new OutboundConnectionFailed({ url: shown, code: errorCode(error), message: `'${host}' did not resolve` })
          })
    if (addresses.length === 0) return yield* new OutboundConnectionFailed({ url: shown, message: `'${host}' resolved to no address` })
    for (const { address } of addresses) yield* checkAddress(policy, shown, host, address)
    return { url: parsed, addresses }
  })

const checkAddress = (policy: OutboundPolicyService, shown: string, host: string, address: string) => {
  const range = refusedRange(address)
  return range !== undefined && !policy.allowance.allows(host, address, range)
    ? Effect.fail(new OutboundRefused({ url: shown, host, address, reason: range }))
    : Effect.void
}

/**
 * What can be told of a URL before any call, without asking DNS: an http(s) URL whose host, when
 * it is an IP address, the policy lets through. For refusing a bad address when it is saved; the
 * call itself still passes `check`.
 */
export const checkLiteral = (url: string): Effect.Effect<void, OutboundRefused, OutboundPolicy> =>
  Effect.gen(function* () {
    const { shown, host } = yield* httpTarget(url)
    if (isIP(host) !== 0) yield* checkAddress(yield* OutboundPolicy, shown, host, host)
  })

/** A `lookup` that answers with the checked addresses only: the connection goes where the check looked. */
export const pinnedLookup =
  (addresses: ReadonlyArray<ResolvedAddress>): LookupFunction =>
  (_host, options, callback) => {
    const wanted = options.family === 4 || options.family === 6 ? addresses.filter(({ family }) => family === options.family) : addresses
    if (wanted.length === 0) {
      callback(Object.assign(new Error("no checked address of the family asked for"), { code: "ENOTFOUND" }), "", 0)
    } else if (options.all === true) {
      callback(null, wanted.map(({ address, family }) => ({ address, family })))
    } else {
      callback(null, wanted[0].address, wanted[0].family)
    }
  }

export interface OutboundRequest {
  readonly url: string
  readonly method: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string | Uint8Array
  /** For everything: resolution, connection, the request and the whole answer. */
  readonly timeoutMs: number
  /** The longest answer body read; a longer one is cut off and fails. */
  readonly maxResponseBytes: number
}

export interface OutboundResponse {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: Buffer
}

/** Sends a request that the check let through, to the addresses it checked. */
const send = (target: CheckedTarget, request: OutboundRequest): Effect.Effect<OutboundResponse, OutboundResponseTooLarge | OutboundConnectionFailed> =>
  Effect.async((resume) => {
    const shown = shownUrl(request.url)
    let settled = false
    const settle = (result: Effect.Effect<OutboundResponse, OutboundResponseTooLarge | OutboundConnectionFailed>) => {
      if (settled) return
      settled = true
      resume(result)
    }
    const failed = (error: unknown) =>
      settle(Effect.fail(new OutboundConnectionFailed({ url: shown, code: errorCode(error), message: error instanceof Error ? error.message : String(error) })))
    const tooLarge = () => {
      settle(Effect.fail(new OutboundResponseTooLarge({ url: shown, maxBytes: request.maxResponseBytes })))
      outgoing.destroy()
    }
    const client = target.url.protocol === "https:" ? https : http
    // agent false: a fresh connection each time, as a pooled one may lead where an earlier check looked
    const outgoing = client.request(target.url, { method: request.method, headers: request.headers, lookup: pinnedLookup(target.addresses), agent: false }, (response) => {
      const declared = Number(response.headers["content-length"])
      if (Number.isFinite(declared) && declared > request.maxResponseBytes) return tooLarge()
      const chunks: Array<Buffer> = []
      let received = 0
      response.on("data", (chunk: Buffer) => {
        received += chunk.length
        if (received > request.maxResponseBytes) return tooLarge()
        chunks.push(chunk)
      })
      response.on("end", () => settle(Effect.succeed({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) })))
      response.on("error", failed)
      response.on("aborted", () => failed(new Error("the answer broke off")))
    })
    outgoing.on("error", failed)
    outgoing.end(request.body)
    return Effect.sync(() => outgoing.destroy())
  })

/**
 * The one way to call a user-given URL: checked (`check`), then sent to the checked addresses.
 * Redirects are not followed: a 3xx is the answer.
 */
export const request = (outbound: OutboundRequest): Effect.Effect<OutboundResponse, OutboundError, OutboundPolicy> =>
  check(outbound.url).pipe(
    Effect.flatMap((target) => send(target, outbound)),
    Effect.timeoutFail({ duration: Duration.millis(outbound.timeoutMs), onTimeout: () => new OutboundTimeout({ url: shownUrl(outbound.url), timeoutMs: outbound.timeoutMs }) })
  )

// ---------------------------------------------------------------------------------------------
// The checked fetch: for clients that take one, with an answer that streams

/** What clients take as their `fetch` (the `ai` SDK's providers, openid-client, the MCP SDK). */
export type OutboundFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

const headersOf = (message: http.IncomingMessage): Headers => {
  const headers = new Headers()
  for (let i = 0; i + 1 < message.rawHeaders.length; i += 2) headers.append(message.rawHeaders[i], message.rawHeaders[i + 1])
  return headers
}

/**
 * A fetch through the policy: each request passes `check` (a refused address rejects it with the
 * `OutboundRefused`) and connects to the addresses it checked; the answer's body streams (a model's
 * tokens, an SSE stream) until it ends or the request's signal aborts it. A redirect is the answer.
 */
export const checkedFetch = (policy: OutboundPolicyService): OutboundFetch => async (input, init) => {
  const request = new Request(input, init)
  const checked = await Effect.runPromise(Effect.either(Effect.provideService(check(request.url), OutboundPolicy, policy)))
  if (Either.isLeft(checked)) throw checked.left
  const target = checked.right
  const headers = Object.fromEntries(request.headers)
  const body = request.body === null ? undefined : Buffer.from(await request.arrayBuffer())
  if (body !== undefined) headers["content-length"] = String(body.length)
  const client = target.url.protocol === "https:" ? https : http
  return new Promise<Response>((resolve, reject) => {
    // agent false: a fresh connection each time, as a pooled one may lead where an earlier check looked
    const options = { method: request.method, headers, lookup: pinnedLookup(target.addresses), agent: false, signal: request.signal }
    const outgoing = client.request(target.url, options, (incoming) => {
      const status = incoming.statusCode ?? 0
      const noBody = status === 204 || status === 304 || request.method === "HEAD"
      if (noBody) incoming.resume()
      resolve(new Response(noBody ? null : (Readable.toWeb(incoming) as ReadableStream), { status, statusText: incoming.statusMessage, headers: headersOf(incoming) }))
    })
    outgoing.on("error", reject)
    outgoing.end(body)
  })
}

/** The fetch of this node's policy. */
export const nodeFetch = Effect.map(OutboundPolicy, checkedFetch)
