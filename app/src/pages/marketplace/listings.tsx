/**
 * The organization's allow-list as the marketplace, integrations and re-authentication pages share
 * it: the listings (`plugin.org.list`, every page), a listing's credentials in words (this
 * workspace's own, and the organization's shared one that serves workspaces without their own),
 * and the credential controls (a secret entered in a password field and never shown again; OAuth's
 * Connect or Reconnect, which leaves for the authorization server and comes back to this page),
 * for this workspace and, for Owners and Admins, for the whole organization.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query"
import { type FormEvent, type ReactNode, useState } from "react"
import { invoke, type Place } from "../../api.ts"
import { useAccess } from "../../session.tsx"
import { ErrorNote, Field, Loading, Time } from "../../ui.tsx"
import "./plugins.css"

/** Spec 5 rule 12: a plugin page's body only for those who may `capability` (Owners and Admins); anyone else is told so. */
export const PluginManagersOnly = ({ place, capability, children }: { place: Place; capability: string; children: ReactNode }) => {
  const access = useAccess(place)
  if (access.isPending) return <Loading what="your access" />
  if (!access.can(capability)) {
    return (
      <p className="warn-note" role="note">
        Only organization Owners and workspace Admins manage plugins and integrations. Ask one of them if you need a server connected.
      </p>
    )
  }
  return children
}

export type AuthKind = "oauth" | "secret" | "none"
export type CredentialStatus = "active" | "needs_reauth" | "revoked"

export interface Listing {
  readonly listingId: string
  readonly pluginType: "mcp_server" | "integration" | "content_tool" | "capability"
  readonly catalogServerId: string | null
  readonly source: "registry" | "custom" | "svc"
  readonly name: string
  readonly title: string | null
  readonly description: string
  readonly endpointUrl: string | null
  readonly transport: string | null
  readonly authKind: AuthKind
  readonly authConfig: { readonly header?: string; readonly urlVariable?: string }
  readonly enabled: boolean
  /** This workspace's install: null until it is enabled or disabled here. */
  readonly workspace: { readonly enabled: boolean; readonly healthStatus: string; readonly lastHealthCheckAt: string | null; readonly healthError: string | null } | null
  /** This workspace's credential: null until a secret is entered or OAuth connected. */
  readonly credential: CredentialState | null
  /** The organization's shared credential, used where a workspace has none of its own. */
  readonly sharedCredential: CredentialState | null
}

export interface CredentialState {
  readonly status: CredentialStatus
  readonly expiresAt: string | null
  readonly lastRefreshedAt: string | null
  readonly updatedAt: string
}

/** The credential a connection from this workspace uses: its own, whatever its state, else the organization's (docs/decisions.md). */
export const credentialInUse = (listing: Listing): CredentialState | null => listing.credential ?? listing.sharedCredential

export const listingName = (listing: Pick<Listing, "title" | "name">) => listing.title ?? listing.name

export const listingsKey = (place: Place) => ["plugin-listings", place.org, place.ws] as const

/** Pages read at most: an allow-list is a few dozen servers, not thousands. */
const MAX_PAGES = 20

/** Every listing of the organization's allow-list, with this workspace's install and credential. */
export const useListings = (place: Place, enabled = true) =>
  useQuery({
    queryKey: listingsKey(place),
    enabled,
    queryFn: async () => {
      const listings: Array<Listing> = []
      let cursor: string | null = null
      for (let page = 0; page < MAX_PAGES; page++) {
        const answer: { listings: ReadonlyArray<Listing>; nextCursor: string | null } = await invoke(place, "plugin.org.list", { limit: 200, ...(cursor === null ? {} : { cursor }) })
        listings.push(...answer.listings)
        cursor = answer.nextCursor
        if (cursor === null) break
      }
      return listings
    }
  })

const STATUS_WORDS: Record<CredentialStatus, string> = { active: "Active", needs_reauth: "Needs re-authentication", revoked: "Revoked" }

/** A credential's state in words; `of` says whose (this workspace's when unset). */
export const CredentialBadge = ({ listing, of = "workspace" }: { listing: Listing; of?: "workspace" | "organization" }) => {
  if (listing.authKind === "none") return <span className="badge-pill">No credential needed</span>
  const status = (of === "workspace" ? listing.credential : listing.sharedCredential)?.status
  const words = status === undefined ? (listing.authKind === "oauth" ? "Not connected" : "No secret entered") : STATUS_WORDS[status]
  return <span className={`badge-pill credential-${status ?? "missing"}`}>{words}</span>
}

/** Why an OAuth round trip failed, from the callback's `oauth_error` (a reason code, never text to show as is). */
const OAUTH_ERRORS: Readonly<Record<string, string>> = {
  oauth_denied: "the authorization server did not grant access (it was declined or refused)",
  oauth_state_invalid: "this connection attempt expired or was already used; connect again",
  oauth_server_failed: "the authorization server could not complete the connection; try again later",
  unauthenticated: "you were signed out before coming back; sign in and connect again"
}

export const oauthErrorWords = (reason: string) => OAUTH_ERRORS[reason] ?? `connecting failed (${/^[a-z_]{1,64}$/.test(reason) ? reason : "error"})`

/** The callback reads this cookie to send the browser back to the page it left (gateway/pluginOAuth.ts). */
const OAUTH_RETURN_COOKIE = "svc_oauth_return"
const OAUTH_CALLBACK_PATH = "/api/v1/plugins/oauth/callback"

/** Leaves for the authorization server; the callback brings the browser back to `returnTo`. */
const authorizeAt = (authorizationUrl: string, returnTo: string) => {
  const secure = window.location.protocol === "https:" ? "; Secure" : ""
  document.cookie = `${OAUTH_RETURN_COOKIE}=${encodeURIComponent(returnTo)}; Path=${OAUTH_CALLBACK_PATH}; Max-Age=600; SameSite=Lax${secure}`
  window.location.assign(authorizationUrl)
}

/** For this workspace, or for the whole organization (`shared`). */
interface Whose {
  readonly shared: boolean
}

const SecretForm = ({ place, listing, shared, onSaved }: { place: Place; listing: Listing; onSaved: (message: string) => void } & Whose) => {
  const client = useQueryClient()
  const [secret, setSecret] = useState("")
  const stored = shared ? listing.sharedCredential : listing.credential
  const save = useMutation({
    mutationFn: async () => {
      await invoke(place, shared ? "plugin.credential.set_shared_secret" : "plugin.credential.set_secret", { listingId: listing.listingId, secret })
      // enabled here already: connect again with the new secret, so its health shows now
      return listing.workspace?.enabled === true ? invoke<{ healthStatus: string }>(place, "plugin.workspace.check_health", { listingId: listing.listingId }) : undefined
    },
    onSuccess: (health) => {
      setSecret("")
      onSaved(
        `${shared ? "The organization's shared secret" : "The secret"} for ${listingName(listing)} is saved${health === undefined ? "" : `; the server is ${health.healthStatus}`}.`
      )
    },
    onSettled: () => client.invalidateQueries({ queryKey: listingsKey(place) })
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    save.mutate()
  }
  const { header, urlVariable } = listing.authConfig
  const sent = urlVariable !== undefined ? `Put into the server's address (its ${urlVariable})` : header === undefined ? "Sent" : `Sent in the ${header} header`
  return (
    <form onSubmit={submit} className="secret-form">
      <Field
        label={shared ? `Shared secret of ${listingName(listing)}, for every workspace` : `Secret for ${listingName(listing)}`}
        hint={`${sent} when connecting; stored encrypted and never shown again.${stored === null ? "" : " Saving replaces the one stored."}`}
      >
        {(id, hint) => (
          <input id={id} aria-describedby={hint} type="password" autoComplete="off" required maxLength={8192} value={secret} onChange={(event) => setSecret(event.target.value)} />
        )}
      </Field>
      <ErrorNote error={save.error} title="The secret was not saved" />
      <button type="submit" className={shared ? undefined : "primary"} disabled={save.isPending}>
        {save.isPending ? "Saving…" : `${stored === null ? "Save" : "Replace"} ${shared ? "shared secret" : "secret"}`}
      </button>
    </form>
  )
}

/**
 * Connect (a first authorization) or Reconnect (re-authentication with the stored client); for the
 * organization, starting again re-authenticates with its stored client.
 */
const OAuthConnect = ({ place, listing, shared, returnTo }: { place: Place; listing: Listing; returnTo: string } & Whose) => {
  const access = useAccess(place)
  const reconnect = (shared ? listing.sharedCredential : listing.credential) !== null
  const capability = shared ? "plugin.oauth.start_shared" : reconnect ? "plugin.credential.reauth" : "plugin.oauth.start"
  const start = useMutation({
    mutationFn: () => invoke<{ authorizationUrl: string }>(place, capability, { listingId: listing.listingId }),
    onSuccess: (started) => authorizeAt(started.authorizationUrl, returnTo)
  })
  if (!access.can(capability)) return null
  const verb = reconnect ? "Reconnect" : "Connect"
  return (
    <div>
      <ErrorNote error={start.error} title="The connection could not start" />
      <button
        type="button"
        className={shared ? undefined : "primary"}
        onClick={() => start.mutate()}
        disabled={start.isPending || start.isSuccess}
        aria-label={shared ? `${verb} the whole organization to ${listingName(listing)}` : `${verb} ${listingName(listing)}`}
      >
        {start.isPending || start.isSuccess ? "Opening the sign-in page…" : shared ? `${verb} for the organization` : verb}
      </button>
    </div>
  )
}

/** What the workspace's connection uses, in words: its own, the organization's, or neither. */
const SharedNote = ({ listing }: { listing: Listing }) => {
  const name = listingName(listing)
  if (listing.sharedCredential === null) {
    return listing.credential === null ? null : <p className="muted">The organization has no shared credential for {name}.</p>
  }
  return listing.credential === null ? (
    <p className="uses-shared">This workspace uses the organization's shared credential: it has none of its own. One entered here would override it in this workspace.</p>
  ) : (
    <p className="muted">This workspace's own credential overrides the organization's shared one here.</p>
  )
}

const Expiry = ({ credential }: { credential: CredentialState | null }) =>
  credential?.status === "active" && credential.expiresAt !== null ? (
    <span className="muted">
      {" "}
      · access expires <Time at={credential.expiresAt} />
    </span>
  ) : null

/**
 * The listing's credentials, this workspace's and the organization's shared one, and what can be
 * done about them; `returnTo` is the page OAuth comes back to. The shared one is shown to everyone
 * who sees the page; only those who may set it get its controls (there is no capability to clear it).
 */
export const CredentialControls = ({ place, listing, returnTo, onSaved }: { place: Place; listing: Listing; returnTo: string; onSaved: (message: string) => void }) => {
  const access = useAccess(place)
  if (listing.authKind === "none") return null
  const secret = listing.authKind === "secret"
  const setsShared = access.can(secret ? "plugin.credential.set_shared_secret" : "plugin.oauth.start_shared")
  return (
    <div className="credential">
      <div role="group" aria-label={`This workspace's credential for ${listingName(listing)}`}>
        <p>
          Credential in this workspace: <CredentialBadge listing={listing} />
          <Expiry credential={listing.credential} />
        </p>
        {secret
          ? access.can("plugin.credential.set_secret") && <SecretForm place={place} listing={listing} shared={false} onSaved={onSaved} />
          : <OAuthConnect place={place} listing={listing} shared={false} returnTo={returnTo} />}
      </div>
      <div className="shared-credential" role="group" aria-label={`The organization's shared credential for ${listingName(listing)}`}>
        <p>
          Organization's shared credential: <CredentialBadge listing={listing} of="organization" />
          <Expiry credential={listing.sharedCredential} />
        </p>
        <SharedNote listing={listing} />
        {setsShared &&
          (secret
            ? <SecretForm place={place} listing={listing} shared onSaved={onSaved} />
            : <OAuthConnect place={place} listing={listing} shared returnTo={returnTo} />)}
      </div>
    </div>
  )
}
