import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  discoverProvider,
  finishAuthorization,
  OidcDiscoveryFailed,
  OidcLoginFailed,
  type OidcProvider,
  startAuthorization
} from "../../src/identity/Oidc.ts"
import { checkedFetch, makePolicy, type OutboundFetch, parseOutboundAllow } from "../../src/platform/Outbound.ts"
import { type OidcServer, startOidcServer } from "../support/oidcServer.ts"

const redirectUri = "https://app.example.test/sso/callback"
const client = { client_id: "svc-test", client_secret: "s3cret-for-tests-only", redirect_uris: [redirectUri] }
const alice = { sub: "user-7f3a", email: "Alice.Liddell@Example.COM" }

/** The outbound guard, with this machine's loopback allowed (the test provider listens there); every URL it was asked for. */
const asked: Array<string> = []
const allowLoopback = checkedFetch(makePolicy(parseOutboundAllow("127.0.0.1")))
const guarded: OutboundFetch = (input, init) => {
  asked.push(input instanceof Request ? input.url : String(input))
  return allowLoopback(input, init)
}

/** Fails the test unless `promise` rejects with an OidcLoginFailed; returns it. */
const loginFailure = async (promise: Promise<unknown>): Promise<OidcLoginFailed> => {
  const error = await promise.then(() => undefined, (e: unknown) => e)
  expect(error).toBeInstanceOf(OidcLoginFailed)
  return error as OidcLoginFailed
}

const discoveryFailure = async (promise: Promise<unknown>): Promise<OidcDiscoveryFailed> => {
  const error = await promise.then(() => undefined, (e: unknown) => e)
  expect(error).toBeInstanceOf(OidcDiscoveryFailed)
  return error as OidcDiscoveryFailed
}

describe("OIDC relying party against a real provider", () => {
  let idp: OidcServer
  let handle: OidcProvider

  beforeAll(async () => {
    idp = await startOidcServer({ accounts: [alice, { sub: "user-9b1c", email: "bob@example.com" }], clients: [client] })
    handle = await discoverProvider({ issuer: idp.issuer, clientId: client.client_id, clientSecret: client.client_secret, fetch: guarded })
  })

  afterAll(async () => {
    await idp?.close()
  })

  describe("discovery", () => {
    it("discovers a good issuer", () => {
      const metadata = handle.serverMetadata()
      expect(metadata.issuer).toBe(idp.issuer)
      expect(metadata.authorization_endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//)
      expect(handle.clientMetadata().client_id).toBe(client.client_id)
    })

    it("fails for an issuer URL that serves no discovery document", async () => {
      const error = await discoveryFailure(
        discoverProvider({ issuer: `${idp.issuer}/not-an-issuer`, clientId: "x", clientSecret: "y", fetch: guarded })
      )
      expect(error.reason).toBe("unreachable")
      expect(error.message).toContain("404")
    })

    it("fails when nothing listens at the issuer", async () => {
      const closed = createServer()
      await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
      const port = (closed.address() as AddressInfo).port
      await new Promise<void>((resolve) => closed.close(() => resolve()))
      const error = await discoveryFailure(
        discoverProvider({ issuer: `http://127.0.0.1:${port}`, clientId: "x", clientSecret: "y", fetch: guarded })
      )
      expect(error.reason).toBe("unreachable")
    })

    it("fails when the discovery document names another issuer", async () => {
      // a server that republishes the real provider's document under its own address
      const document = await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()
      const impostor: Server = createServer((_req, res) => {
        res.setHeader("content-type", "application/json")
        res.end(JSON.stringify(document))
      })
      await new Promise<void>((resolve) => impostor.listen(0, "127.0.0.1", resolve))
      try {
        const issuer = `http://127.0.0.1:${(impostor.address() as AddressInfo).port}`
        const error = await discoveryFailure(discoverProvider({ issuer, clientId: "x", clientSecret: "y", fetch: guarded }))
        expect(error.reason).toBe("issuer_mismatch")
      } finally {
        await new Promise<void>((resolve) => impostor.close(() => resolve()))
      }
    })

    it("refuses an issuer on an address the outbound guard does not allow: loopback, or a name that resolves to a private address", async () => {
      const loopback = await discoveryFailure(discoverProvider({ issuer: idp.issuer, clientId: "x", clientSecret: "y", fetch: checkedFetch(makePolicy([])) }))
      expect(loopback.reason).toBe("address_refused")
      expect(loopback.message).toMatch(/127\.0\.0\.1 is a loopback address/)
      const resolvesPrivate = checkedFetch(makePolicy([], async () => [{ address: "10.20.30.40", family: 4 }]))
      const internal = await discoveryFailure(discoverProvider({ issuer: "https://idp.corp.example", clientId: "x", clientSecret: "y", fetch: resolvesPrivate }))
      expect(internal.reason).toBe("address_refused")
      expect(internal.message).toMatch(/idp\.corp\.example \(10\.20\.30\.40\) is a private address/)
    })

    it("refuses http issuers that are not loopback, and discovery document URLs", async () => {
      expect((await discoveryFailure(discoverProvider({ issuer: "http://idp.example.com", clientId: "x", clientSecret: "y", fetch: guarded }))).reason)
        .toBe("insecure_issuer")
      expect((await discoveryFailure(discoverProvider({ issuer: "not a url", clientId: "x", clientSecret: "y", fetch: guarded }))).reason)
        .toBe("invalid_issuer")
      expect(
        (await discoveryFailure(
          discoverProvider({ issuer: `${idp.issuer}/.well-known/openid-configuration`, clientId: "x", clientSecret: "y", fetch: guarded })
        )).reason
      ).toBe("invalid_issuer")
      expect((await discoveryFailure(discoverProvider({ issuer: idp.issuer, clientId: "x", clientSecret: "", fetch: guarded }))).reason)
        .toBe("invalid_client")
    })
  })

  describe("login", () => {
    it("builds a code + PKCE S256 request with state and nonce", async () => {
      const pending = await startAuthorization(handle, { redirectUri })
      const url = new URL(pending.url)
      expect(url.searchParams.get("response_type")).toBe("code")
      expect(url.searchParams.get("client_id")).toBe(client.client_id)
      expect(url.searchParams.get("redirect_uri")).toBe(redirectUri)
      expect(url.searchParams.get("scope")).toBe("openid email profile")
      expect(url.searchParams.get("code_challenge_method")).toBe("S256")
      expect(url.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/)
      expect(url.searchParams.get("state")).toBe(pending.state)
      expect(url.searchParams.get("nonce")).toBe(pending.nonce)
      expect(url.searchParams.has("code_verifier")).toBe(false)
      expect(pending.url).not.toContain(pending.codeVerifier)
      expect(url.searchParams.has("client_secret")).toBe(false)
      const other = await startAuthorization(handle, { redirectUri, scope: "email" })
      expect(new URL(other.url).searchParams.get("scope")).toBe("openid email")
      expect(other.state).not.toBe(pending.state)
      expect(other.nonce).not.toBe(pending.nonce)
      expect(other.codeVerifier).not.toBe(pending.codeVerifier)
    })

    it("completes a full login with the account's subject and lowercased, verified email", async () => {
      const pending = await startAuthorization(handle, { redirectUri })
      const callbackUrl = await idp.login(pending.url, "alice.liddell@example.com")
      const callback = new URL(callbackUrl)
      expect(callbackUrl.startsWith(`${redirectUri}?`)).toBe(true)
      expect(callback.searchParams.get("code")).toBeTruthy()
      expect(callback.searchParams.get("state")).toBe(pending.state)

      const from = asked.length
      const identity = await finishAuthorization(handle, { callbackUrl, redirectUri, ...pending })
      expect(identity).toEqual({ subject: alice.sub, email: "alice.liddell@example.com", emailVerified: true })
      // the code exchange went through the guard the provider was discovered with
      expect(asked.slice(from)).toContain(handle.serverMetadata().token_endpoint)
    })

    it("rejects a tampered state", async () => {
      const pending = await startAuthorization(handle, { redirectUri })
      const callbackUrl = await idp.login(pending.url, alice.email)
      const tampered = new URL(callbackUrl)
      tampered.searchParams.set("state", `${pending.state}x`)
      const error = await loginFailure(finishAuthorization(handle, { callbackUrl: tampered.href, redirectUri, ...pending }))
      expect(error.reason).toBe("state_mismatch")
      expect(error._tag).toBe("OidcLoginFailed")

      // the callback of another login (its own, valid state) does not complete this one
      const another = await startAuthorization(handle, { redirectUri })
      const error2 = await loginFailure(finishAuthorization(handle, { callbackUrl, redirectUri, ...another }))
      expect(error2.reason).toBe("state_mismatch")

      const stripped = new URL(callbackUrl)
      stripped.searchParams.delete("state")
      expect((await loginFailure(finishAuthorization(handle, { callbackUrl: stripped.href, redirectUri, ...pending }))).reason)
        .toBe("state_mismatch")
    })

    it("rejects a code used twice", async () => {
      const pending = await startAuthorization(handle, { redirectUri })
      const callbackUrl = await idp.login(pending.url, "bob@example.com")
      const first = await finishAuthorization(handle, { callbackUrl, redirectUri, ...pending })
      expect(first.subject).toBe("user-9b1c")
      const error = await loginFailure(finishAuthorization(handle, { callbackUrl, redirectUri, ...pending }))
      expect(error.reason).toBe("token_exchange_failed")
      expect(error.message).toContain("invalid_grant")
    })

    it("rejects a wrong PKCE code verifier without leaking it", async () => {
      const pending = await startAuthorization(handle, { redirectUri })
      const callbackUrl = await idp.login(pending.url, alice.email)
      const other = await startAuthorization(handle, { redirectUri })
      const error = await loginFailure(
        finishAuthorization(handle, { callbackUrl, redirectUri, ...pending, codeVerifier: other.codeVerifier })
      )
      expect(error.reason).toBe("token_exchange_failed")
      expect(error.message).not.toContain(other.codeVerifier)
      expect(error.message).not.toContain(client.client_secret)
      expect(error.message).not.toContain(new URL(callbackUrl).searchParams.get("code"))
    })

    it("rejects an id_token whose nonce is not this login's", async () => {
      const pending = await startAuthorization(handle, { redirectUri })
      const callbackUrl = await idp.login(pending.url, alice.email)
      const error = await loginFailure(finishAuthorization(handle, { callbackUrl, redirectUri, ...pending, nonce: "another-nonce" }))
      expect(error.reason).toBe("id_token_invalid")
      expect(error.message).not.toContain(pending.nonce)
    })

    it("reports an error the provider redirects back with", async () => {
      const pending = await startAuthorization(handle, { redirectUri })
      const callbackUrl = await idp.login(pending.url, "nobody@example.com")
      expect(new URL(callbackUrl).searchParams.get("error")).toBe("access_denied")
      const error = await loginFailure(finishAuthorization(handle, { callbackUrl, redirectUri, ...pending }))
      expect(error.reason).toBe("provider_error")
      expect(error.message).toContain("access_denied")
    })

    it("rejects a callback without a code, and one that is not a URL", async () => {
      const pending = await startAuthorization(handle, { redirectUri })
      const noCode = `${redirectUri}?state=${encodeURIComponent(pending.state)}`
      expect((await loginFailure(finishAuthorization(handle, { callbackUrl: noCode, redirectUri, ...pending }))).reason)
        .toBe("missing_code")
      expect((await loginFailure(finishAuthorization(handle, { callbackUrl: "::", redirectUri, ...pending }))).reason)
        .toBe("invalid_callback")
    })

    it("rejects a client secret the provider does not accept", async () => {
      const wrong = await discoverProvider({ issuer: idp.issuer, clientId: client.client_id, clientSecret: "not-the-secret", fetch: guarded })
      const pending = await startAuthorization(wrong, { redirectUri })
      const callbackUrl = await idp.login(pending.url, alice.email)
      const error = await loginFailure(finishAuthorization(wrong, { callbackUrl, redirectUri, ...pending }))
      expect(error.reason).toBe("token_exchange_failed")
      expect(error.message).toContain("invalid_client")
      expect(error.message).not.toContain("not-the-secret")
    })
  })

  describe("a provider that releases email only at userinfo", () => {
    let conforming: OidcServer

    beforeAll(async () => {
      conforming = await startOidcServer({ accounts: [alice], clients: [client], emailInIdToken: false })
    })

    afterAll(async () => {
      await conforming?.close()
    })

    it("takes the email claims from the userinfo endpoint", async () => {
      const rp = await discoverProvider({ issuer: conforming.issuer, clientId: client.client_id, clientSecret: client.client_secret, fetch: guarded })
      const pending = await startAuthorization(rp, { redirectUri })
      const callbackUrl = await conforming.login(pending.url, alice.email)
      const identity = await finishAuthorization(rp, { callbackUrl, redirectUri, ...pending })
      expect(identity).toEqual({ subject: alice.sub, email: "alice.liddell@example.com", emailVerified: true })
    })
  })
})
