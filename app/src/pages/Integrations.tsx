/**
 * The organization's integrations (spec 2.9, 3.5, 4.5, 5 rules 11-12): the allow-list with each
 * listing enabled or disabled for the organization, uninstalled, enabled in this workspace (with
 * the server's health), and its credential here (a secret, or OAuth's Connect). And the
 * re-authentication page a notification links to (spec 4.5's deep link
 * `/{org}/{ws}/settings/integrations/reauth/{listing}`, the listing's `porg_` id): the credential's
 * state and a Reconnect button that runs the OAuth flow again and comes back here. Only those who
 * manage plugins (Owners and Admins) see any of it; anyone else is told so.
 */
import { useMutation, useQueryClient } from "@tanstack/react-query"
import { useState } from "react"
import type { PageProps } from "../App.tsx"
import { invoke, type Place } from "../api.ts"
import { placePath } from "../Layout.tsx"
import { Link, useQueryParams } from "../router.tsx"
import { useAccess } from "../session.tsx"
import { ErrorNote, Loading, PageTitle, Time } from "../ui.tsx"
import { CredentialControls, type Listing, listingName, listingsKey, oauthErrorWords, PluginManagersOnly, useListings } from "./marketplace/listings.tsx"
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
          Connected {listing === undefined ? "the server" : listingName(listing)}: its credential is {listing?.credential?.status === "active" ? "active" : "stored"}.
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

/** Enabled in this workspace or not, the server's health, and the buttons that change them. */
const WorkspaceInstall = ({ place, listing, onDone }: { place: Place; listing: Listing; onDone: (message: string) => void }) => {
  const client = useQueryClient()
  const access = useAccess(place)
  const install = listing.workspace
  const enabledHere = install?.enabled === true
  const name = listingName(listing)
  const toggle = useMutation({
    mutationFn: () => invoke<{ healthStatus: string }>(place, "plugin.workspace.set_enabled", { listingId: listing.listingId, enabled: !enabledHere }),
    onSuccess: (result) => onDone(enabledHere ? `${name} is disabled in this workspace.` : `${name} is enabled in this workspace; the server is ${HEALTH_WORDS[result.healthStatus] ?? result.healthStatus}.`),
    onSettled: () => client.invalidateQueries({ queryKey: listingsKey(place) })
  })
  const check = useMutation({
    mutationFn: () => invoke<{ healthStatus: string }>(place, "plugin.workspace.check_health", { listingId: listing.listingId }),
    onSuccess: (result) => onDone(`${name} is ${HEALTH_WORDS[result.healthStatus] ?? result.healthStatus}.`),
    onSettled: () => client.invalidateQueries({ queryKey: listingsKey(place) })
  })
  return (
    <div className="workspace-install">
      <p>
        In this workspace: <strong>{enabledHere ? "enabled" : "not enabled"}</strong>
        {enabledHere && (
          <>
            {" "}
            · server <span className={`badge-pill health-${install.healthStatus}`}>{HEALTH_WORDS[install.healthStatus] ?? install.healthStatus}</span>
            {install.lastHealthCheckAt !== null && (
              <span className="muted">
                {" "}
                checked <Time at={install.lastHealthCheckAt} />
              </span>
            )}
          </>
        )}
      </p>
      {enabledHere && install.healthError !== null && <p className="muted health-error">{install.healthError}</p>}
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

const ManageIntegrations = ({ place }: { place: Place }) => {
  const listings = useListings(place)
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
        {credential?.status === "active" && <p>The connection works: nothing needs doing.</p>}
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
