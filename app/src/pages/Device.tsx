/**
 * Approving a CLI login (src/identity/DeviceLogin.ts): the CLI shows a user code and the address of this
 * page (its `verification_uri_complete` carries `?user_code=`). The signed-in person checks the
 * code against their terminal, chooses the workspace (or the whole organization) the CLI will act
 * in as them, and approves or denies. A wrong code counts against a lock like a wrong password.
 */
import { useMutation } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import { ApiError, invoke, type Place } from "../api.ts"
import { useQueryParams } from "../router.tsx"
import type { Account } from "../session.tsx"
import { ErrorNote, Field, PageTitle } from "../ui.tsx"
import "./Device.css"

interface Approved {
  readonly status: "approved"
  readonly clientName: string
  readonly userCode: string
  readonly level: "workspace" | "organization"
}

interface Denied {
  readonly status: "denied"
  readonly clientName: string
  readonly userCode: string
}

interface Choice {
  readonly value: string
  readonly place: Place
  readonly label: string
  readonly orgName: string
}

/** Headlines for the refusals a person can meet here; the server's message follows in words. */
const REFUSALS: Readonly<Record<string, string>> = {
  device_code_not_found: "Unknown code",
  device_code_expired: "Code expired",
  too_many_attempts: "Too many wrong codes",
  device_already_approved: "Already approved",
  device_denied: "Already denied",
  device_redeemed: "Already complete"
}

const refusalTitle = (error: unknown) => (error instanceof ApiError && error.reason !== undefined ? REFUSALS[error.reason] : undefined) ?? "Nothing was decided"

const choicesOf = (account: Account): ReadonlyArray<Choice> =>
  account.memberships.flatMap((org) =>
    org.workspaces.map((ws) => ({ value: `${org.slug}/${ws.slug}`, place: { org: org.slug, ws: ws.slug }, label: `${org.name} / ${ws.name}`, orgName: org.name }))
  )

export const DevicePage = ({ account }: { account: Account }) => {
  const fromLink = useQueryParams().get("user_code") ?? ""
  const choices = choicesOf(account)
  const [userCode, setUserCode] = useState(fromLink)
  const [where, setWhere] = useState(choices[0]?.value ?? "")
  const [level, setLevel] = useState<"workspace" | "organization">("workspace")
  const chosen = choices.find((choice) => choice.value === where)

  const decide = useMutation({
    mutationFn: (decision: "approve" | "deny"): Promise<Approved | Denied> => {
      if (chosen === undefined) return Promise.reject(new Error("choose a workspace first"))
      const code = userCode.trim()
      return decision === "approve"
        ? invoke<Approved>(chosen.place, "auth.device.approve", { userCode: code, level })
        : invoke<Denied>(chosen.place, "auth.device.deny", { userCode: code })
    }
  })

  const submit = (event: FormEvent) => {
    event.preventDefault()
    decide.mutate("approve")
  }

  const result = decide.data
  const decided = result !== undefined
  return (
    <div className="device-page">
      <PageTitle>Approve a CLI login</PageTitle>
      {choices.length === 0 ? (
        <p className="warn-note">You are not a member of any workspace, so there is nowhere to sign a CLI in. Ask an owner of your organization to add you.</p>
      ) : (
        <form onSubmit={submit} className="card">
          <p>
            A command-line tool asked to sign in as you. Approve only if you started it yourself and the code below is the one your terminal shows.
          </p>
          <Field label="Code shown in your terminal" hint="Eight letters, such as BCDF-GHJK.">
            {(id, hint) => (
              <input
                id={id}
                aria-describedby={hint}
                className="user-code"
                required
                maxLength={32}
                autoComplete="off"
                autoCapitalize="characters"
                spellCheck={false}
                value={userCode}
                onChange={(event) => setUserCode(event.target.value)}
                disabled={decided}
              />
            )}
          </Field>
          <Field label="Workspace for the CLI">
            {(id) => (
              <select id={id} value={where} onChange={(event) => setWhere(event.target.value)} disabled={decided}>
                {choices.map((choice) => (
                  <option key={choice.value} value={choice.value}>
                    {choice.label}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="The CLI acts">
            {(id) => (
              <select id={id} value={level} onChange={(event) => setLevel(event.target.value === "organization" ? "organization" : "workspace")} disabled={decided}>
                <option value="workspace">In this workspace, with your role there</option>
                <option value="organization">At organization level{chosen === undefined ? "" : ` (${chosen.orgName})`}, with your organization role</option>
              </select>
            )}
          </Field>
          <ErrorNote error={decide.error} title={refusalTitle(decide.error)} />
          {!decided && (
            <div className="row">
              <button type="submit" className="primary" disabled={decide.isPending}>
                Approve
              </button>
              <button type="button" className="danger" disabled={decide.isPending} onClick={() => decide.mutate("deny")}>
                Deny
              </button>
            </div>
          )}
        </form>
      )}
      <div role="status" aria-live="polite">
        {result?.status === "approved" && (
          <p className="ok-note">
            Approved: {result.clientName} ({result.userCode}) is signed in as you{" "}
            {result.level === "organization" ? `at organization level in ${chosen?.orgName ?? "the organization"}` : `in ${chosen?.label ?? "the workspace"}`}. You can
            return to your terminal.
          </p>
        )}
        {result?.status === "denied" && (
          <p className="ok-note">
            Denied: {result.clientName} ({result.userCode}) will not be signed in.
          </p>
        )}
      </div>
      {decided && (
        <button
          type="button"
          onClick={() => {
            setUserCode("")
            decide.reset()
          }}
        >
          Approve another CLI login
        </button>
      )}
    </div>
  )
}
