/**
 * Sign-in: email and password, then the two-factor code when the server asks for it
 * (401 `mfa_code_required`), or one of the organization's SSO providers. After it the person goes
 * where they were headed (`?next=`), or to their first workspace.
 */
import { useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import { ApiError, invokeOwn, request } from "../api.ts"
import { navigate, useQueryParams } from "../router.tsx"
import { ACCOUNT_KEY, homeOf, type Account } from "../session.tsx"
import { ErrorNote, Field } from "../ui.tsx"

/** Only a path of this app: never an absolute URL someone slipped into the link. */
const safeNext = (next: string | null) => (next !== null && next.startsWith("/") && !next.startsWith("//") ? next : undefined)

const SsoProviders = () => {
  const [org, setOrg] = useState("")
  const [providers, setProviders] = useState<ReadonlyArray<{ id: string; name: string }> | undefined>(undefined)
  const [error, setError] = useState<unknown>(null)
  const find = async (event: FormEvent) => {
    event.preventDefault()
    setError(null)
    try {
      const found = await request<{ providers: ReadonlyArray<{ id: string; name: string }> }>(`/v1/auth/sso/providers?org=${encodeURIComponent(org.trim())}`, { method: "GET" })
      setProviders(found.providers)
    } catch (cause) {
      setError(cause)
    }
  }
  return (
    <section aria-labelledby="sso-heading">
      <h2 id="sso-heading">Single sign-on</h2>
      <form onSubmit={find} className="row">
        <Field label="Organization">
          {(id) => <input id={id} value={org} onChange={(event) => setOrg(event.target.value)} placeholder="your-org" autoComplete="organization" />}
        </Field>
        <button type="submit">Find providers</button>
      </form>
      <ErrorNote error={error} />
      {providers !== undefined &&
        (providers.length === 0 ? (
          <p className="muted">This organization has no single sign-on provider.</p>
        ) : (
          <ul>
            {providers.map((provider) => (
              <li key={provider.id}>
                <a href={`/v1/auth/sso/start?org=${encodeURIComponent(org.trim())}&provider=${encodeURIComponent(provider.id)}`}>Sign in with {provider.name}</a>
              </li>
            ))}
          </ul>
        ))}
    </section>
  )
}

export const SignInPage = () => {
  const client = useQueryClient()
  const next = safeNext(useQueryParams().get("next"))
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const [code, setCode] = useState("")
  const [needsCode, setNeedsCode] = useState(false)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    try {
      await request("/v1/auth/sign-in", { body: { email, password, ...(needsCode ? { code: code.replace(/\s+/g, "") } : {}) } })
      const account = await invokeOwn<Account>("account.get")
      client.setQueryData(ACCOUNT_KEY, account)
      navigate(next ?? homeOf(account) ?? "/", { replace: true })
    } catch (cause) {
      if (cause instanceof ApiError && cause.reason === "mfa_code_required") {
        setNeedsCode(true)
        setError(null)
      } else setError(cause)
    } finally {
      setBusy(false)
    }
  }

  return (
    <main id="main" className="sign-in">
      <h1>Sign in</h1>
      <form onSubmit={submit} aria-describedby="sign-in-error">
        <Field label="Email">
          {(id) => <input id={id} type="email" required autoComplete="username" value={email} onChange={(event) => setEmail(event.target.value)} disabled={needsCode} />}
        </Field>
        <Field label="Password">
          {(id) => (
            <input id={id} type="password" required autoComplete="current-password" value={password} onChange={(event) => setPassword(event.target.value)} disabled={needsCode} />
          )}
        </Field>
        {needsCode && (
          <Field label="Two-factor code" hint="The six digits your authenticator app shows now.">
            {(id, hint) => (
              <input
                id={id}
                aria-describedby={hint}
                inputMode="numeric"
                autoComplete="one-time-code"
                required
                autoFocus
                value={code}
                onChange={(event) => setCode(event.target.value)}
              />
            )}
          </Field>
        )}
        <div id="sign-in-error">
          <ErrorNote error={error} />
        </div>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? "Signing in…" : needsCode ? "Verify and sign in" : "Sign in"}
        </button>
      </form>
      <SsoProviders />
    </main>
  )
}
