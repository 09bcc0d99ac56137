/**
 * API keys (spec 2.6, 3.3, 4.2): the workspace's keys (and an Owner's organization keys), made,
 * rotated, a rotation confirmed, revoked. A raw key is shown once, right after it is made, with a
 * Copy button; the page never sees it again. Only workspace Admins and organization Owners manage
 * keys: anyone else reaching the address is told so.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useEffect, useRef, useState } from "react"
import type { PageProps } from "../App.tsx"
import { invoke, type Place, request } from "../api.ts"
import { useAccess, useAccount } from "../session.tsx"
import { CopyButton, ErrorNote, Field, Loading, PageTitle, Time } from "../ui.tsx"
import "./Keys.css"

interface KeySummary {
  readonly publicId: string
  readonly name: string
  readonly workspaceId: string | null
  readonly status: "active" | "grace" | "expired" | "revoked"
  readonly createdBy: string
  readonly createdAt: string
  readonly expiresAt: string | null
  readonly supersedes: string | null
  readonly supersededBy: string | null
}

/** A raw key just made, to show once. */
interface NewSecret {
  readonly publicId: string
  readonly name: string
  readonly rawKey: string
  /** After a rotation: the old key and when it stops unless the rotation is confirmed first. */
  readonly superseded?: { readonly publicId: string; readonly expiresAt: string }
}

const keysKey = (place: Place) => ["api-keys", place.org, place.ws] as const

/** Rotation, acknowledgement and revocation have the spec's fixed routes (4.2), not the capability's name. */
const keyRoute = <T,>(place: Place, path: string, method: "POST" | "DELETE", keyPublicId: string) =>
  request<T>(`/v1/${encodeURIComponent(place.org)}/${encodeURIComponent(place.ws)}/api-keys/${path}`, { method, body: { keyPublicId } })

const STATUS_WORDS: Record<KeySummary["status"], string> = {
  active: "Active",
  grace: "Rotated, still working",
  expired: "Expired",
  revoked: "Revoked"
}

const SecretPanel = ({ secret, onDone, onAcknowledge, acknowledging }: { secret: NewSecret; onDone: () => void; onAcknowledge: () => void; acknowledging: boolean }) => {
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => heading.current?.focus(), [secret.publicId])
  return (
    <section className="card secret-panel" aria-labelledby="secret-heading">
      <h2 id="secret-heading" ref={heading} tabIndex={-1}>
        {secret.superseded === undefined ? `Your new key “${secret.name}”` : `The new key replacing “${secret.name}”`}
      </h2>
      <p className="warn-note">
        Copy this key now and keep it somewhere safe. <strong>You will not see it again</strong>: only a hash of it is stored.
      </p>
      <div className="row secret-row">
        <label htmlFor="new-secret" className="visually-hidden">
          New API key
        </label>
        <input id="new-secret" className="secret" readOnly value={secret.rawKey} onFocus={(event) => event.target.select()} />
        <CopyButton text={secret.rawKey} label="Copy key" />
      </div>
      {secret.superseded !== undefined && (
        <div className="rotation-note">
          <p>
            The old key ({secret.superseded.publicId}) keeps working until <Time at={secret.superseded.expiresAt} />. Once everything uses the new key,
            confirm the rotation to stop the old one now.
          </p>
          <button type="button" onClick={onAcknowledge} disabled={acknowledging}>
            Confirm rotation: stop the old key now
          </button>
        </div>
      )}
      <button type="button" className="primary" onClick={onDone}>
        I have copied it
      </button>
    </section>
  )
}

const CreateKeyForm = ({ place, canCreateOrgKeys, onCreated }: { place: Place; canCreateOrgKeys: boolean; onCreated: (secret: NewSecret) => void }) => {
  const client = useQueryClient()
  const [name, setName] = useState("")
  const [level, setLevel] = useState<"workspace" | "organization">("workspace")
  const [days, setDays] = useState("")
  const create = useMutation({
    mutationFn: () =>
      invoke<{ publicId: string; rawKey: string; name: string }>(place, "create_api_key", {
        name: name.trim(),
        ...(level === "organization" ? { level } : {}),
        ...(days.trim() === "" ? {} : { expiresInDays: Number(days) })
      }),
    onSuccess: (created) => {
      setName("")
      setDays("")
      onCreated({ publicId: created.publicId, name: created.name, rawKey: created.rawKey })
      void client.invalidateQueries({ queryKey: keysKey(place) })
    }
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate()
  }
  return (
    <section aria-labelledby="create-heading" className="card">
      <h2 id="create-heading">Create a key</h2>
      <form onSubmit={submit}>
        <Field label="Name" hint="What the key is for, e.g. the CI system that uses it.">
          {(id, hint) => <input id={id} aria-describedby={hint} required maxLength={100} value={name} onChange={(event) => setName(event.target.value)} />}
        </Field>
        {canCreateOrgKeys && (
          <Field label="Acts in">
            {(id) => (
              <select id={id} value={level} onChange={(event) => setLevel(event.target.value === "organization" ? "organization" : "workspace")}>
                <option value="workspace">This workspace only, as a Member</option>
                <option value="organization">The organization, as an Org member (no workspace data)</option>
              </select>
            )}
          </Field>
        )}
        <Field label="Expires after (days)" hint="Leave empty for a key that does not expire.">
          {(id, hint) => (
            <input id={id} aria-describedby={hint} type="number" min={1} max={3650} inputMode="numeric" value={days} onChange={(event) => setDays(event.target.value)} />
          )}
        </Field>
        <ErrorNote error={create.error} title="The key was not created" />
        <button type="submit" className="primary" disabled={create.isPending}>
          {create.isPending ? "Creating…" : "Create key"}
        </button>
      </form>
    </section>
  )
}

/** Asks before revoking: a revoked key cannot be brought back. */
const RevokeDialog = ({ item, busy, error, onConfirm, onCancel }: { item: KeySummary; busy: boolean; error: unknown; onConfirm: () => void; onCancel: () => void }) => {
  const dialog = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    const element = dialog.current
    if (element !== null && !element.open) element.showModal()
    return () => element?.close()
  }, [])
  return (
    <dialog ref={dialog} aria-labelledby="revoke-heading" onCancel={onCancel} className="revoke-dialog">
      <h2 id="revoke-heading">Revoke the key “{item.name}”?</h2>
      <p>Every request made with it will be refused from now on. This cannot be undone.</p>
      <ErrorNote error={error} title="The key was not revoked" />
      <div className="row">
        <button type="button" className="danger" onClick={onConfirm} disabled={busy}>
          {busy ? "Revoking…" : "Revoke key"}
        </button>
        <button type="button" onClick={onCancel} autoFocus>
          Cancel
        </button>
      </div>
    </dialog>
  )
}

const KeyTable = ({ keys, myUserId, onRotate, onAcknowledge, onRevoke, busy }: {
  keys: ReadonlyArray<KeySummary>
  myUserId: string | undefined
  onRotate: (key: KeySummary) => void
  onAcknowledge: (key: KeySummary) => void
  onRevoke: (key: KeySummary) => void
  busy: boolean
}) => {
  const byId = new Map(keys.map((key) => [key.publicId, key]))
  return (
    <div className="table-scroll" tabIndex={0}>
      <table className="keys-table">
        <caption className="visually-hidden">API keys</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Acts in</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            <th scope="col">Expires</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => {
            const old = key.supersedes === null ? undefined : byId.get(key.supersedes)
            const live = key.status === "active" || key.status === "grace"
            return (
              <tr key={key.publicId}>
                <th scope="row">
                  {key.name}
                  <div className="muted key-id">
                    <code>{key.publicId}</code>
                  </div>
                </th>
                <td>{key.workspaceId === null ? "Organization" : "This workspace"}</td>
                <td>
                  <span className={`badge-pill status-${key.status}`}>{STATUS_WORDS[key.status]}</span>
                  {key.status === "grace" && key.supersededBy !== null && <div className="muted">replaced by {byId.get(key.supersededBy)?.name ?? key.supersededBy}</div>}
                </td>
                <td>
                  <Time at={key.createdAt} />
                  {key.createdBy === myUserId && <div className="muted">by you</div>}
                </td>
                <td>
                  <Time at={key.expiresAt} />
                </td>
                <td>
                  <div className="row">
                    {key.status === "active" && (
                      <button type="button" onClick={() => onRotate(key)} disabled={busy} aria-label={`Rotate ${key.name}`}>
                        Rotate
                      </button>
                    )}
                    {old?.status === "grace" && (
                      <button type="button" onClick={() => onAcknowledge(key)} disabled={busy} aria-label={`Confirm rotation of ${key.name}`}>
                        Confirm rotation
                      </button>
                    )}
                    {live && (
                      <button type="button" className="danger" onClick={() => onRevoke(key)} disabled={busy} aria-label={`Revoke ${key.name}`}>
                        Revoke
                      </button>
                    )}
                  </div>
                </td>
              </tr>
            )
          })}
        </tbody>
      </table>
    </div>
  )
}

const ManageKeys = ({ place, isOwner }: { place: Place; isOwner: boolean }) => {
  const client = useQueryClient()
  const account = useAccount()
  const [secret, setSecret] = useState<NewSecret | undefined>(undefined)
  const [revoking, setRevoking] = useState<KeySummary | undefined>(undefined)
  const [done, setDone] = useState<string | undefined>(undefined)
  const keys = useQuery({ queryKey: keysKey(place), queryFn: () => invoke<{ keys: ReadonlyArray<KeySummary> }>(place, "api_key.list") })
  const refresh = () => client.invalidateQueries({ queryKey: keysKey(place) })

  const rotate = useMutation({
    mutationFn: (key: KeySummary) =>
      keyRoute<{ publicId: string; rawKey: string; superseded: { publicId: string; expiresAt: string } }>(place, "rotate", "POST", key.publicId).then((rotated) => ({
        ...rotated,
        name: key.name
      })),
    onSuccess: (rotated) => {
      setDone(undefined)
      setSecret({ publicId: rotated.publicId, name: rotated.name, rawKey: rotated.rawKey, superseded: rotated.superseded })
      void refresh()
    }
  })
  const acknowledge = useMutation({
    mutationFn: (newKeyPublicId: string) => keyRoute(place, "rotate/acknowledge", "POST", newKeyPublicId),
    onSuccess: () => {
      setDone("Rotation confirmed: the old key has stopped working.")
      setSecret((shown) => (shown === undefined ? undefined : { ...shown, superseded: undefined }))
      void refresh()
    }
  })
  const revoke = useMutation({
    mutationFn: (key: KeySummary) => keyRoute(place, "revoke", "DELETE", key.publicId).then(() => key),
    onSuccess: (key) => {
      setRevoking(undefined)
      setDone(`The key “${key.name}” is revoked: requests made with it are refused.`)
      void refresh()
    }
  })
  const busy = rotate.isPending || acknowledge.isPending || revoke.isPending

  return (
    <>
      <p className="muted">
        Keys let programs call this workspace's API. A workspace key acts as a Member of this workspace; an organization key acts at organization level. A key never acts as
        you, and cannot manage keys.
      </p>
      {secret !== undefined && (
        <SecretPanel
          secret={secret}
          onDone={() => setSecret(undefined)}
          onAcknowledge={() => secret.superseded !== undefined && acknowledge.mutate(secret.publicId)}
          acknowledging={acknowledge.isPending}
        />
      )}
      <div role="status" aria-live="polite">
        {done !== undefined && <p className="ok-note">{done}</p>}
      </div>
      <ErrorNote error={rotate.error} title="The key was not rotated" />
      <ErrorNote error={acknowledge.error} title="The rotation was not confirmed" />
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading">Keys</h2>
        {keys.isPending ? (
          <Loading what="keys" />
        ) : keys.isError ? (
          <ErrorNote error={keys.error} title="The keys could not be loaded" />
        ) : keys.data.keys.length === 0 ? (
          <p>No keys yet.</p>
        ) : (
          <KeyTable
            keys={keys.data.keys}
            myUserId={account.data?.userId}
            busy={busy}
            onRotate={(key) => rotate.mutate(key)}
            onAcknowledge={(key) => acknowledge.mutate(key.publicId)}
            onRevoke={(key) => {
              revoke.reset()
              setRevoking(key)
            }}
          />
        )}
      </section>
      <CreateKeyForm
        place={place}
        canCreateOrgKeys={isOwner}
        onCreated={(created) => {
          setDone(undefined)
          setSecret(created)
        }}
      />
      {revoking !== undefined && (
        <RevokeDialog item={revoking} busy={revoke.isPending} error={revoke.error} onConfirm={() => revoke.mutate(revoking)} onCancel={() => setRevoking(undefined)} />
      )}
    </>
  )
}

export const KeysPage = ({ place }: PageProps) => {
  const access = useAccess(place)
  return (
    <>
      <PageTitle>API keys</PageTitle>
      {access.isPending ? (
        <Loading what="your access" />
      ) : !access.can("api_key.list") ? (
        <p className="warn-note" role="note">
          You cannot manage API keys in this workspace. Workspace Admins and organization Owners can; ask one of them if you need a key.
        </p>
      ) : (
        <ManageKeys place={place} isOwner={access.data?.orgRole === "owner"} />
      )}
    </>
  )
}
