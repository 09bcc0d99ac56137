/**
 * The person's own security: two-factor sign-in with an authenticator app (TOTP). Enrolment shows
 * a new secret once (to type in, or the otpauth link a phone's authenticator opens) and is finished
 * with a code the app shows; from then on sign-in asks for a code.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useEffect, useRef, useState } from "react"
import type { PageProps } from "../App.tsx"
import { invokeOwn } from "../api.ts"
import { ACCOUNT_KEY, useAccount } from "../session.tsx"
import { CopyButton, ErrorNote, Field, Loading, PageTitle } from "../ui.tsx"
import "./Security.css"

interface Enrolment {
  readonly secret: string
  readonly otpauthUri: string
}

/** The base32 secret in groups of four, easier to type into an app. */
const grouped = (secret: string) => secret.replace(/(.{4})(?=.)/g, "$1 ")

const ConfirmEnrolment = ({ enrolment, onConfirmed }: { enrolment: Enrolment; onConfirmed: () => void }) => {
  const [code, setCode] = useState("")
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => heading.current?.focus(), [enrolment.secret])
  const confirm = useMutation({
    mutationFn: () => invokeOwn<{ mfaEnabled: true }>("auth.mfa.confirm", { code: code.replace(/\s+/g, "") }),
    onSuccess: onConfirmed
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    confirm.mutate()
  }
  return (
    <section className="card" aria-labelledby="enrol-heading">
      <h3 id="enrol-heading" ref={heading} tabIndex={-1}>
        Add this account to your authenticator app
      </h3>
      <ol className="enrol-steps">
        <li>
          <p>In your authenticator app, add an account with this secret key (time-based, 6 digits, every 30 seconds):</p>
          <div className="row">
            <label htmlFor="totp-secret" className="visually-hidden">
              Secret key
            </label>
            <input id="totp-secret" className="totp-secret" readOnly value={grouped(enrolment.secret)} onFocus={(event) => event.target.select()} />
            <CopyButton text={enrolment.secret} label="Copy secret key" />
          </div>
          <p>
            On a phone, you can instead <a href={enrolment.otpauthUri}>open the setup link in your authenticator app</a>.
          </p>
          <details>
            <summary>Show the setup link</summary>
            <code className="otpauth-uri">{enrolment.otpauthUri}</code>
          </details>
          <p className="warn-note">This secret is shown only now. If you leave the page before confirming, start again.</p>
        </li>
        <li>
          <form onSubmit={submit}>
            <Field label="Code from your app" hint="The six digits your authenticator app shows for this account.">
              {(id, hint) => (
                <input
                  id={id}
                  aria-describedby={hint}
                  className="totp-code"
                  inputMode="numeric"
                  autoComplete="one-time-code"
                  pattern="[0-9 ]*"
                  required
                  value={code}
                  onChange={(event) => setCode(event.target.value)}
                />
              )}
            </Field>
            <ErrorNote error={confirm.error} title="Two-factor was not turned on" />
            <button type="submit" className="primary" disabled={confirm.isPending}>
              {confirm.isPending ? "Checking…" : "Confirm and turn on"}
            </button>
          </form>
        </li>
      </ol>
    </section>
  )
}

export const SecurityPage = (_props: PageProps) => {
  const client = useQueryClient()
  const account = useAccount()
  const [enrolment, setEnrolment] = useState<Enrolment | undefined>(undefined)
  const [confirmed, setConfirmed] = useState(false)
  const enrol = useMutation({
    mutationFn: () => invokeOwn<Enrolment>("auth.mfa.enroll"),
    onSuccess: (started) => {
      setConfirmed(false)
      setEnrolment(started)
    }
  })
  const mfaEnabled = account.data?.mfaEnabled === true

  return (
    <>
      <PageTitle>Security</PageTitle>
      <section aria-labelledby="mfa-heading">
        <h2 id="mfa-heading">Two-factor sign-in</h2>
        {account.isPending ? (
          <Loading what="your account" />
        ) : (
          <>
            <div role="status" aria-live="polite">
              {confirmed ? (
                <p className="ok-note">Two-factor sign-in is on. From now on, signing in asks for a code from your authenticator app.</p>
              ) : mfaEnabled ? (
                <p className="ok-note">Two-factor sign-in is on: signing in asks for a code from your authenticator app.</p>
              ) : (
                <p className="warn-note">Two-factor sign-in is off. Turn it on so a stolen password alone cannot sign in as you.</p>
              )}
            </div>
            {enrolment === undefined ? (
              <>
                <ErrorNote error={enrol.error} title="Two-factor set-up could not start" />
                <button type="button" className={mfaEnabled ? undefined : "primary"} onClick={() => enrol.mutate()} disabled={enrol.isPending}>
                  {mfaEnabled ? "Move to a new authenticator app" : "Set up two-factor sign-in"}
                </button>
                {mfaEnabled && <p className="muted">Your current app keeps working until you confirm a code from the new one.</p>}
              </>
            ) : (
              <>
                <ConfirmEnrolment
                  enrolment={enrolment}
                  onConfirmed={() => {
                    setEnrolment(undefined)
                    setConfirmed(true)
                    void client.invalidateQueries({ queryKey: ACCOUNT_KEY })
                  }}
                />
                <button type="button" onClick={() => setEnrolment(undefined)}>
                  Cancel set-up
                </button>
              </>
            )}
          </>
        )}
      </section>
    </>
  )
}
