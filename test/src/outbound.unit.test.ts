import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { loadConfig } from "../../src/platform/Config.ts"
import { check, checkLiteral, makeAllowance, makePolicy, OutboundPolicy, parseOutboundAllow, type RefusedRange, refusedRange, type Resolver } from "../../src/platform/Outbound.ts"

// Addresses only: nothing here is sent anywhere.
const table: ReadonlyArray<readonly [string, RefusedRange | undefined]> = [
  // public
  ["8.8.8.8", undefined],
  ["1.1.1.1", undefined],
  ["172.15.255.255", undefined],
  ["172.32.0.0", undefined],
  ["100.63.255.255", undefined],
  ["100.128.0.0", undefined],
  ["169.253.255.255", undefined],
  ["223.255.255.255", undefined],
  ["2606:4700:4700::1111", undefined],
  ["::ffff:8.8.8.8", undefined],
  ["64:ff9b::808:808", undefined],
  ["2002:808:808::1", undefined],
  // loopback
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["::1", "loopback"],
  ["0:0:0:0:0:0:0:1", "loopback"],
  ["::ffff:127.0.0.1", "loopback"],
  ["::ffff:7f00:1", "loopback"],
  ["0:0:0:0:0:ffff:7f00:0001", "loopback"],
  ["64:ff9b::127.0.0.1", "loopback"],
  ["2002:7f00:1::", "loopback"],
  // unspecified
  ["0.0.0.0", "unspecified"],
  ["0.1.2.3", "unspecified"],
  ["::", "unspecified"],
  ["::ffff:0.0.0.0", "unspecified"],
  // private
  ["10.0.0.1", "private"],
  ["10.255.255.255", "private"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["192.168.1.1", "private"],
  ["100.64.0.1", "private"],
  ["100.127.255.255", "private"],
  ["fc00::1", "private"],
  ["fd12:3456::1", "private"],
  ["fec0::1", "private"],
  ["64:ff9b:1::a00:1", "private"],
  ["::ffff:10.0.0.1", "private"],
  ["::ffff:ac10:1", "private"],
  ["::ffff:192.168.0.1", "private"],
  ["64:ff9b::10.1.2.3", "private"],
  ["2002:c0a8:101::1", "private"],
  // link-local
  ["169.254.0.1", "link-local"],
  ["169.254.169.253", "link-local"],
  ["fe80::1", "link-local"],
  ["fe80::1%eth0", "link-local"],
  ["febf::1", "link-local"],
  ["::ffff:169.254.1.1", "link-local"],
  // cloud metadata
  ["169.254.169.254", "metadata"],
  ["::ffff:169.254.169.254", "metadata"],
  ["::ffff:a9fe:a9fe", "metadata"],
  ["64:ff9b::a9fe:a9fe", "metadata"],
  ["2002:a9fe:a9fe::", "metadata"],
  ["fd00:ec2::254", "metadata"],
  ["100.100.100.200", "metadata"],
  // multicast, broadcast, reserved
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["ff02::1", "multicast"],
  ["255.255.255.255", "broadcast"],
  ["240.0.0.1", "reserved"],
  ["192.0.2.1", "reserved"],
  ["198.51.100.7", "reserved"],
  ["203.0.113.9", "reserved"],
  ["198.18.0.1", "reserved"],
  ["192.0.0.8", "reserved"],
  ["::8.8.8.8", "reserved"],
  ["::127.0.0.1", "reserved"],
  ["100::1", "reserved"],
  ["2001:db8::1", "reserved"],
  ["2001:0:4136:e378::1", "reserved"],
  ["not an address", "reserved"]
]

describe("the outbound address check", () => {
  it.each(table)("%s is %s", (address, range) => {
    expect(refusedRange(address)).toBe(range)
  })
})

describe("OUTBOUND_ALLOW", () => {
  it("allows nothing by default", () => {
    expect(loadConfig({}).outboundAllow).toEqual([])
  })

  it("holds addresses, CIDR ranges and host names", () => {
    expect(loadConfig({ OUTBOUND_ALLOW: " 127.0.0.1, 10.0.0.0/8 ,[::1],fd00::/8,Hooks.Internal.,," }).outboundAllow).toEqual([
      { kind: "subnet", network: "127.0.0.1", prefix: 32, family: "ipv4" },
      { kind: "subnet", network: "10.0.0.0", prefix: 8, family: "ipv4" },
      { kind: "subnet", network: "::1", prefix: 128, family: "ipv6" },
      { kind: "subnet", network: "fd00::", prefix: 8, family: "ipv6" },
      { kind: "host", name: "hooks.internal" }
    ])
  })

  it("refuses what is neither", () => {
    for (const entry of ["10.0.0.0/33", "::1/129", "10.0.0.0/x", "10.0.0.0/8/8", "1.2.3", "hooks.internal/8", "*.internal", "http://hooks.internal", "-bad.example"]) {
      expect(() => loadConfig({ OUTBOUND_ALLOW: entry }), entry).toThrow(/OUTBOUND_ALLOW/)
    }
  })

  it("opens the addresses and ranges it names, in every spelling, and nothing else", () => {
    const allowance = makeAllowance(parseOutboundAllow("127.0.0.1,10.0.0.0/8,fd00::/8"))
    expect(allowance.allows("receiver", "127.0.0.1", "loopback")).toBe(true)
    expect(allowance.allows("receiver", "::ffff:127.0.0.1", "loopback")).toBe(true)
    expect(allowance.allows("receiver", "127.0.0.2", "loopback")).toBe(false)
    expect(allowance.allows("receiver", "::1", "loopback")).toBe(false)
    expect(allowance.allows("receiver", "10.20.30.40", "private")).toBe(true)
    expect(allowance.allows("receiver", "::ffff:a14:1e28", "private")).toBe(true)
    expect(allowance.allows("receiver", "192.168.0.1", "private")).toBe(false)
    expect(allowance.allows("receiver", "fd12::1", "private")).toBe(true)
    expect(allowance.allows("receiver", "fc00::1", "private")).toBe(false)
  })

  it("opens any address of a host it names", () => {
    const allowance = makeAllowance(parseOutboundAllow("hooks.internal"))
    expect(allowance.allows("HOOKS.internal.", "10.1.2.3", "private")).toBe(true)
    expect(allowance.allows("other.internal", "10.1.2.3", "private")).toBe(false)
  })

  it("opens a metadata address only by naming it exactly", () => {
    expect(makeAllowance(parseOutboundAllow("169.254.0.0/16")).allows("x", "169.254.169.254", "metadata")).toBe(false)
    expect(makeAllowance(parseOutboundAllow("0.0.0.0/0")).allows("x", "100.100.100.200", "metadata")).toBe(false)
    expect(makeAllowance(parseOutboundAllow("metadata.internal")).allows("metadata.internal", "169.254.169.254", "metadata")).toBe(false)
    expect(makeAllowance(parseOutboundAllow("169.254.0.0/16")).allows("x", "169.254.170.2", "link-local")).toBe(true)
    expect(makeAllowance(parseOutboundAllow("169.254.169.254")).allows("x", "169.254.169.254", "metadata")).toBe(true)
    expect(makeAllowance(parseOutboundAllow("169.254.169.254")).allows("x", "::ffff:169.254.169.254", "metadata")).toBe(true)
  })
})

/** A resolver with fixed answers: no DNS is asked. */
const fixedResolver =
  (answers: Readonly<Record<string, ReadonlyArray<string>>>): Resolver =>
  async (host) =>
    (answers[host] ?? []).map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))

const checked = (url: string, allow = "", resolver: Resolver = fixedResolver({})) =>
  Effect.runPromise(check(url).pipe(Effect.provideService(OutboundPolicy, makePolicy(parseOutboundAllow(allow), resolver)), Effect.either))

describe("checking a URL", () => {
  it("takes http and https only", async () => {
    for (const url of ["ftp://8.8.8.8/", "file:///etc/passwd", "gopher://8.8.8.8/", "javascript:alert(1)"]) {
      const result = await checked(url)
      expect(Either.isLeft(result) && result.left._tag === "OutboundRefused" && result.left.reason, url).toBe("scheme")
    }
    expect(Either.isLeft(await checked("not a url"))).toBe(true)
  })

  it("refuses an IP literal in a refused range, in any spelling a URL accepts", async () => {
    for (const url of ["http://127.0.0.1/", "http://0x7f.1/", "http://2130706433/", "http://[::1]:8080/", "http://[::ffff:7f00:1]/", "http://[fd00:ec2::254]/"]) {
      const result = await checked(url)
      expect(Either.isLeft(result) && result.left._tag === "OutboundRefused", url).toBe(true)
    }
  })

  it("refuses a name when any one of its addresses is refused, naming it", async () => {
    const result = await checked("https://mixed.example/hook", "", fixedResolver({ "mixed.example": ["93.184.216.34", "10.0.0.7"] }))
    expect(Either.isLeft(result) && result.left).toMatchObject({ _tag: "OutboundRefused", host: "mixed.example", address: "10.0.0.7", reason: "private" })
    expect(Either.isLeft(result) && result.left.message).toMatch(/mixed\.example \(10\.0\.0\.7\) is a private address.*OUTBOUND_ALLOW/)
  })

  it("lets a public name through, with the addresses it resolved to", async () => {
    const result = await checked("https://hooks.example/x", "", fixedResolver({ "hooks.example": ["93.184.216.34", "2606:2800:220:1::1"] }))
    expect(Either.getOrThrow(result).addresses.map(({ address }) => address)).toEqual(["93.184.216.34", "2606:2800:220:1::1"])
  })

  it("states a URL without its credentials", async () => {
    const result = await checked("http://user:hunter2@127.0.0.1/")
    expect(Either.isLeft(result) && result.left).toMatchObject({ url: "http://127.0.0.1/" })
  })

  it("fails a name that does not resolve as a connection failure", async () => {
    const result = await checked("http://nowhere.example/")
    expect(Either.isLeft(result) && result.left._tag).toBe("OutboundConnectionFailed")
  })
})

describe("checking a URL as it is saved (no DNS)", () => {
  const literal = (url: string, allow = "") =>
    Effect.runPromise(checkLiteral(url).pipe(Effect.provideService(OutboundPolicy, makePolicy(parseOutboundAllow(allow), () => Promise.reject(new Error("no DNS here")))), Effect.either))

  it("refuses an address literal in a refused range unless allowed, and a scheme other than http(s)", async () => {
    for (const [url, reason] of [["http://127.0.0.1:8080/v1", "loopback"], ["http://[::1]/v1", "loopback"], ["https://10.1.2.3/v1", "private"], ["http://169.254.169.254/", "metadata"], ["ftp://8.8.8.8/", "scheme"]] as const) {
      const result = await literal(url)
      expect(Either.isLeft(result) && result.left.reason, url).toBe(reason)
    }
    expect(Either.isRight(await literal("http://127.0.0.1:8080/v1", "127.0.0.1"))).toBe(true)
  })

  it("lets a host name and a public address through without resolving them", async () => {
    for (const url of ["https://api.openai.com/v1", "http://localhost:8080/v1", "https://8.8.8.8/v1"]) expect(Either.isRight(await literal(url)), url).toBe(true)
  })
})
