/** How a client address becomes the subject of its guard (src/identity/Lockout.ts). */
import { describe, expect, it } from "@effect/vitest"
import { addressSubject } from "../../src/identity/Lockout.ts"

describe("a client address as a guard's subject", () => {
  it.each([
    ["IPv4 as it is", "192.0.2.7", "192.0.2.7"],
    ["IPv4 mapped into IPv6 as IPv4", "::ffff:192.0.2.7", "192.0.2.7"],
    ["IPv6 by its /64", "2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"],
    ["IPv6 spelled out in full, the same /64", "2001:0DB8:0001:0002:0000:0000:0000:0001", "2001:db8:1:2::/64"],
    ["IPv6 compressed", "2001:db8::1", "2001:db8:0:0::/64"],
    ["IPv6 loopback", "::1", "0:0:0:0::/64"]
  ])("%s", (_name, address, subject) => expect(addressSubject(address)).toBe(subject))
})
