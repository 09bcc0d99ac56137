/**
 * The organization's integrations (spec 2.9, 3.5, 4.5, 5 rules 11-12): the allow-list with each
 * listing enabled or disabled for the organization, uninstalled, enabled in this workspace (with
 * the server's health), and its credential here (a secret, or OAuth's Connect). And the
 * re-authentication page a notification links to (spec 4.5's deep link
 * `/{org}/{ws}/settings/integrations/reauth/{listing}`, the listing's `porg_` id; for an
 * organization's shared credential, in a workspace of the person's): the credentials' states (the
 * workspace's own and the organization's shared one) and Reconnect buttons that run the OAuth flow
 * again and come back here. Only those who
 * manage plugins (Owners and Admins) see any of it; anyone else is told so. They may add a custom
 * MCP server by its endpoint (`plugin.org.install`); a server that turns out to ask for OAuth when a
 * workspace enables it becomes an OAuth listing (spec 6.3.4) and shows "needs authorization" and Connect.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import type { PageProps } from "../App.tsx"
import { invoke, type Place } from "../api.ts"
import { placePath } from "../Layout.tsx"
import { Link, useQueryParams } from "../router.tsx"
import { useAccess } from "../session.tsx"
import { ErrorNote, Field, Loading, PageTitle, Time } from "../ui.tsx"
import { CredentialControls, credentialInUse, type Listing, listingName, listingsKey, oauthErrorWords, PluginManagersOnly, useListings } from "./marketplace/listings.tsx"
import "./Integrations.css"

/** What came back from the authorization server (`?connected=` or `?oauth_error=`), in words. */
const OAuthOutcome = ({ listings }: { listings: ReadonlyArray<Listing> }) => {
  const params = useQueryParams()
  const connected = params.get("connected")
  const failed = params.get("oauth_error")
  const listing = listings.find((l) => l.listingId === connected)
  return (
    <>
      {connected !== null && (
        <p className="ok-note" role="status">
          Connected {listing === undefined ? "the server" : listingName(listing)}: its credential is {listing !== undefined && credentialInUse(listing)?.status === "active" ? "active" : "stored"}.
        </p>
      )}
      {failed !== null && (
        <p className="error-note" role="alert">
          The connection was not made: {oauthErrorWords(failed)}.
        </p>
      )}
    </>
  )
}

const HEALTH_WORDS: Readonly<Record<string, string>> = { healthy: "healthy", unhealthy: "unhealthy", unknown: "not checked yet" }

/** The health check's code for a server that answered with an OAuth challenge (src/marketplace/McpConnect.ts). */
const OAUTH_REQUIRED = "oauth_required"

interface Health {
  readonly healthStatus: string
  readonly healthError: string | null
}

const healthWords = (health: Health) => (health.healthError === OAUTH_REQUIRED ? "needs authorization" : (HEALTH_WORDS[health.healthStatus] ?? health.healthStatus))
const healthClass = (health: Health) => (health.healthError === OAUTH_REQUIRED ? "health-needs-authorization" : `health-${health.healthStatus}`)

/** Enabled in this workspace or not, the server's health, and the buttons that change them. */
const WorkspaceInstall = ({ place, listing, onDone }: { place: Place; listing: Listing; onDone: (message: string) => void }) => {
  const client = useQueryClient()
  const access = useAccess(place)
  const install = listing.workspace
  const enabledHere = install?.enabled === true
  const name = listingName(listing)
  const toggle = useMutation({
    mutationFn: () => invoke<Health>(place, "plugin.workspace.set_enabled", { listingId: listing.listingId, enabled: !enabledHere }),
    onSuccess: (result) =>
      onDone(
        enabledHere
          ? `${name} is disabled in this workspace.`
          : result.healthError === OAUTH_REQUIRED
            ? `${name} is enabled in this workspace; the server needs authorization: connect it.`
            : `${name} is enabled in this workspace; the server is ${healthWords(result)}.`
      ),
    onSettled: () => client.invalidateQueries({ queryKey: listingsKey(place) })
  })
  const check = useMutation({
    mutationFn: () => invoke<Health>(place, "plugin.workspace.check_health", { listingId: listing.listingId }),
    onSuccess: (result) => onDone(`${name} ${result.healthError === OAUTH_REQUIRED ? "needs authorization" : `is ${healthWords(result)}`}.`),
    onSettled: () => client.invalidateQueries({ queryKey: listingsKey(place) })
  })
  return (
    <div className="workspace-install">
      <p>
        In this workspace: <strong>{enabledHere ? "enabled" : "not enabled"}</strong>
        {enabledHere && (
          <>
            {" "}
            · server <span className={`badge-pill ${healthClass(install)}`}>{healthWords(install)}</span>
            {install.lastHealthCheckAt !== null && (
              <span className="muted">
                {" "}
                checked <Time at={install.lastHealthCheckAt} />
              </span>
            )}
          </>
        )}
      </p>
      {enabledHere && install.healthError === OAUTH_REQUIRED && (
        <p className="health-error">The server asks for authorization (OAuth): connect it below so the assistant can use it here.</p>
      )}
      {enabledHere && install.healthError !== null && install.healthError !== OAUTH_REQUIRED && <p className="muted health-error">{install.healthError}</p>}
      {!listing.enabled && !enabledHere && <p className="muted">Enable it for the organization first.</p>}
      <ErrorNote error={toggle.error ?? check.error} title="The workspace's install was not changed" />
      {access.can("plugin.workspace.set_enabled") && (
        <div className="row">
          <button
            type="button"
            onClick={() => toggle.mutate()}
            disabled={toggle.isPending || (!listing.enabled && !enabledHere)}
            aria-label={`${enabledHere ? "Disable" : "Enable"} ${name} in this workspace`}
          >
            {toggle.isPending ? (enabledHere ? "Disabling…" : "Connecting…") : enabledHere ? "Disable in this workspace" : "Enable in this workspace"}
          </button>
          {enabledHere && access.can("plugin.workspace.check_health") && (
            <button type="button" onClick={() => check.mutate()} disabled={check.isPending} aria-label={`Check the health of ${name}`}>
              {check.isPending ? "Checking…" : "Check health"}
            </button>
          )}
        </div>
      )}
    </div>
  )
}

const ListingCard = ({ place, listing, onDone }: { place: Place; listing: Listing; onDone: (message: string) => void }) => {
  const client = useQueryClient()
  const access = useAccess(place)
  const [confirming, setConfirming] = useState(false)
  const name = listingName(listing)
  const headingId = `listing-${listing.listingId}`
  const refresh = () => client.invalidateQueries({ queryKey: listingsKey(place) })
  const setEnabled = useMutation({
    mutationFn: () => invoke(place, "plugin.org.set_enabled", { listingId: listing.listingId, enabled: !listing.enabled }),
    onSuccess: () => onDone(`${name} is ${listing.enabled ? "disabled" : "enabled"} for the organization.`),
    onSettled: refresh
  })
  const uninstall = useMutation({
    mutationFn: () => invoke(place, "plugin.org.uninstall", { listingId: listing.listingId }),
    onSuccess: () => onDone(`${name} is uninstalled: no workspace uses it any more.`),
    onSettled: refresh
  })
  const pack = listing.pluginType === "capability"
  return (
    <article className="card listing" aria-labelledby={headingId}>
      <div className="listing-head">
        <h3 id={headingId}>{name}</h3>
        <span className={`badge-pill ${listing.enabled ? "org-enabled" : ""}`}>{listing.enabled ? "Enabled for the organization" : "Disabled for the organization"}</span>
      </div>
      <p className="muted listing-meta">
        <code>{listing.name}</code>
        {listing.endpointUrl !== null && (
          <>
            {" "}
            · {listing.transport} · <span className="endpoint">{listing.endpointUrl}</span>
          </>
        )}
      </p>
      {listing.description !== "" && <p>{listing.description}</p>}
      <ErrorNote error={setEnabled.error} title="The organization's setting was not changed" />
      <ErrorNote error={uninstall.error} title="It was not uninstalled" />
      <div className="row">
        {access.can("plugin.org.set_enabled") && (
          <button type="button" onClick={() => setEnabled.mutate()} disabled={setEnabled.isPending} aria-label={`${listing.enabled ? "Disable" : "Enable"} ${name} for the organization`}>
            {listing.enabled ? "Disable for the organization" : "Enable for the organization"}
          </button>
        )}
        {access.can("plugin.org.uninstall") && !confirming && (
          <button type="button" className="danger" onClick={() => setConfirming(true)} aria-label={`Uninstall ${name}`}>
            Uninstall
          </button>
        )}
      </div>
      {confirming && (
        <div className="warn-note confirm" role="group" aria-label={`Confirm uninstalling ${name}`}>
          <p>
            Uninstall {name}? Every workspace stops using it{pack ? " (calls already running finish)" : ""}. You can install it again from the marketplace.
          </p>
          <div className="row">
            <button type="button" className="danger" onClick={() => uninstall.mutate()} disabled={uninstall.isPending}>
              {uninstall.isPending ? "Uninstalling…" : `Uninstall ${name}`}
            </button>
            <button type="button" onClick={() => setConfirming(false)} autoFocus>
              Cancel
            </button>
          </div>
        </div>
      )}
      {!pack && <WorkspaceInstall place={place} listing={listing} onDone={onDone} />}
      {!pack && <CredentialControls place={place} listing={listing} returnTo={placePath(place, "settings/integrations")} onSaved={onDone} />}
    </article>
  )
}

/** Adds an MCP server by its endpoint to the organization's allow-list, disabled (`plugin.org.install`). */
const AddCustomServer = ({ place, onDone }: { place: Place; onDone: (message: string) => void }) => {
  const client = useQueryClient()
  const empty = { name: "", title: "", endpointUrl: "", transport: "streamable-http", authKind: "none" }
  const [form, setForm] = useState(empty)
  const set = (key: keyof typeof empty) => (event: { target: { value: string } }) => setForm({ ...form, [key]: event.target.value })
  const add = useMutation({
    mutationFn: () =>
      invoke<Listing>(place, "plugin.org.install", {
        name: form.name.trim(),
        ...(form.title.trim() === "" ? {} : { title: form.title.trim() }),
        endpointUrl: form.endpointUrl.trim(),
        transport: form.transport,
        authKind: form.authKind
      }),
    onSuccess: (listing) => {
      setForm(empty)
      onDone(`${listingName(listing)} is added to the organization, disabled: enable it below.`)
    },
    onSettled: () => client.invalidateQueries({ queryKey: listingsKey(place) })
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    add.mutate()
  }
  return (
    <section className="card add-server" aria-labelledby="add-server-heading">
      <h2 id="add-server-heading">Add a custom MCP server</h2>
      <form onSubmit={submit}>
        <Field label="Name" hint="A unique name, such as com.example/notes.">
          {(id, hint) => <input id={id} aria-describedby={hint} required maxLength={200} value={form.name} onChange={set("name")} />}
        </Field>
        <Field label="Title (optional)">{(id) => <input id={id} maxLength={200} value={form.title} onChange={set("title")} />}</Field>
        <Field label="Endpoint URL" hint="The server's http(s) address, such as https://mcp.example.com/mcp.">
          {(id, hint) => <input id={id} aria-describedby={hint} type="url" required maxLength={2048} value={form.endpointUrl} onChange={set("endpointUrl")} />}
        </Field>
        <Field label="Transport">
          {(id) => (
            <select id={id} value={form.transport} onChange={set("transport")}>
              <option value="streamable-http">Streamable HTTP</option>
              <option value="sse">SSE (older servers)</option>
            </select>
          )}
        </Field>
        <Field label="Authentication" hint="A server that asks for OAuth when a workspace enables it is switched to OAuth then.">
          {(id, hint) => (
            <select id={id} aria-describedby={hint} value={form.authKind} onChange={set("authKind")}>
              <option value="none">None</option>
              <option value="secret">Secret (an API key sent as a bearer token)</option>
              <option value="oauth">OAuth</option>
            </select>
          )}
        </Field>
        <ErrorNote error={add.error} title="The server was not added" />
        <button type="submit" className="primary" disabled={add.isPending}>
          {add.isPending ? "Adding…" : "Add server"}
        </button>
      </form>
    </section>
  )
}

const ManageIntegrations = ({ place }: { place: Place }) => {
  const listings = useListings(place)
  const access = useAccess(place)
  const [done, setDone] = useState<string | undefined>(undefined)
  if (listings.isPending) return <Loading what="the organization's integrations" />
  if (listings.isError) return <ErrorNote error={listings.error} title="The integrations could not be loaded" />
  const servers = listings.data.filter((l) => l.pluginType !== "capability")
  const packs = listings.data.filter((l) => l.pluginType === "capability")
  return (
    <>
      <OAuthOutcome listings={listings.data} />
      <div role="status" aria-live="polite">
        {done !== undefined && <p className="ok-note">{done}</p>}
      </div>
      {listings.data.length === 0 && (
        <p>
          Nothing is installed yet. Find MCP servers and capability packs in the <Link to={placePath(place, "marketplace")}>marketplace</Link>.
        </p>
      )}
      {servers.length > 0 && (
        <section aria-labelledby="servers-heading">
          <h2 id="servers-heading">MCP servers</h2>
          {servers.map((listing) => (
            <ListingCard key={listing.listingId} place={place} listing={listing} onDone={setDone} />
          ))}
        </section>
      )}
      {packs.length > 0 && (
        <section aria-labelledby="packs-heading">
          <h2 id="packs-heading">Capability packs</h2>
          {packs.map((listing) => (
            <ListingCard key={listing.listingId} place={place} listing={listing} onDone={setDone} />
          ))}
        </section>
      )}
      {/* after what is installed: the page is mostly for managing that */}
      {access.can("plugin.org.install") && <AddCustomServer place={place} onDone={setDone} />}
    </>
  )
}

export const IntegrationsPage = ({ place }: PageProps) => (
  <>
    <PageTitle actions={<Link to={placePath(place, "marketplace")}>Find more in the marketplace</Link>}>Integrations</PageTitle>
    <PluginManagersOnly place={place} capability="plugin.org.list">
      <ManageIntegrations place={place} />
    </PluginManagersOnly>
  </>
)

const Reauthenticate = ({ place, listingId }: { place: Place; listingId: string }) => {
  const listings = useListings(place)
  const [done, setDone] = useState<string | undefined>(undefined)
  if (listings.isPending) return <Loading what="the integration" />
  if (listings.isError) return <ErrorNote error={listings.error} title="The integration could not be loaded" />
  const listing = listings.data.find((l) => l.listingId === listingId)
  if (listing === undefined) {
    return (
      <p className="warn-note" role="note">
        There is no integration {listingId} in this organization any more: it may have been uninstalled. See the <Link to={placePath(place, "settings/integrations")}>integrations</Link>.
      </p>
    )
  }
  const credential = listing.credential
  const shared = listing.sharedCredential
  return (
    <>
      <OAuthOutcome listings={listings.data} />
      <div role="status" aria-live="polite">
        {done !== undefined && <p className="ok-note">{done}</p>}
      </div>
      <section className="card" aria-labelledby="reauth-heading">
        <h2 id="reauth-heading">{listingName(listing)}</h2>
        <p className="muted listing-meta">
          <code>{listing.name}</code>
          {listing.endpointUrl !== null && <> · {listing.endpointUrl}</>}
        </p>
        {credential !== null && (
          <dl className="plugin-facts">
            <dt>Credential last refreshed</dt>
            <dd>
              <Time at={credential.lastRefreshedAt} />
            </dd>
            <dt>Credential last changed</dt>
            <dd>
              <Time at={credential.updatedAt} />
            </dd>
          </dl>
        )}
        {credential?.status === "needs_reauth" && (
          <p>
            Its credential could not be refreshed, so the assistant cannot use {listingName(listing)} in this workspace.{" "}
            {listing.authKind === "oauth" ? "Reconnect to sign in to it again." : "Enter its secret again."}
          </p>
        )}
        {shared?.status === "needs_reauth" && (
          <p>
            The organization's shared credential could not be refreshed, so workspaces without their own cannot use {listingName(listing)}
            {credential === null ? ", this one included" : "; this one uses its own"}.{" "}
            {listing.authKind === "oauth" ? "Reconnect it for the organization to sign in to it again." : "Enter the shared secret again."}
          </p>
        )}
        {credentialInUse(listing)?.status === "active" && shared?.status !== "needs_reauth" && <p>The connection works: nothing needs doing.</p>}
        {listing.authKind === "none" ? (
          <p>This server needs no credential.</p>
        ) : (
          <CredentialControls place={place} listing={listing} returnTo={placePath(place, `settings/integrations/reauth/${encodeURIComponent(listing.listingId)}`)} onSaved={setDone} />
        )}
      </section>
    </>
  )
}

export const ReauthPage = ({ place, params }: PageProps) => (
  <>
    <PageTitle actions={<Link to={placePath(place, "settings/integrations")}>All integrations</Link>}>Re-authenticate</PageTitle>
    <PluginManagersOnly place={place} capability="plugin.org.list">
      <Reauthenticate place={place} listingId={params.listing} />
    </PluginManagersOnly>
  </>
)
