/**
 * The plugin marketplace (spec 2.9, 4.5, 6.3.4): the catalog of MCP servers synced from the
 * organization's registries (`plugin.catalog.browse`: search, filters, pages) beside the
 * first-party capability packs (`pluginType: "capability"`), and a server's page
 * (`plugin.catalog.get`) with its README, remotes and versions. Those who may (Owners and Admins,
 * spec 5 rule 12) install a server or a pack to the organization's allow-list, disabled until
 * enabled under Integrations.
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import type { PageProps } from "../App.tsx"
import { invoke, type Place } from "../api.ts"
import { placePath } from "../Layout.tsx"
import { Link, navigate, useQueryParams } from "../router.tsx"
import { useAccess } from "../session.tsx"
import { ErrorNote, Field, Loading, PageTitle, Time } from "../ui.tsx"
import { type AuthKind, type Listing, listingName, listingsKey, PluginManagersOnly, useListings } from "./marketplace/listings.tsx"
import "./Marketplace.css"

interface CatalogServer {
  readonly serverId: string
  readonly name: string
  readonly version: string
  readonly isLatest: boolean
  readonly title: string | null
  readonly description: string
  readonly repository: { readonly url: string } | null
  readonly websiteUrl: string | null
  readonly icons: ReadonlyArray<{ readonly src: string }>
  readonly transportTypes: ReadonlyArray<string>
  readonly authKind: AuthKind
  readonly categories: ReadonlyArray<string>
  readonly status: "active" | "deprecated" | "deleted"
  readonly publishedAt: string | null
  /** The operator's denylist refuses it; the reason is the tooltip (spec 2.9). */
  readonly denylisted: { readonly reason: string } | null
}

interface Remote {
  readonly type: string
  readonly url: string
  readonly headers?: ReadonlyArray<{ readonly name: string; readonly isSecret?: boolean; readonly description?: string }>
}

interface Package {
  readonly registryType?: string
  readonly identifier?: string
  readonly version?: string
}

interface ServerDetail extends CatalogServer {
  readonly remotes: ReadonlyArray<Remote> | null
  readonly packages: ReadonlyArray<Package> | null
  readonly versions: ReadonlyArray<{ readonly serverId: string; readonly version: string; readonly isLatest: boolean; readonly status: CatalogServer["status"] }>
  readonly readmeHtml: string | null
  readonly readmeFetchedAt: string | null
}

interface Registry {
  readonly registryId: string
  readonly name: string
  readonly enabled: boolean
}

const AUTH_WORDS: Record<AuthKind, string> = { none: "No sign-in", secret: "API key or secret", oauth: "OAuth sign-in" }
const TRANSPORT_WORDS: Readonly<Record<string, string>> = { "streamable-http": "Streamable HTTP", sse: "SSE", stdio: "stdio (runs locally)" }
const transportWords = (transport: string) => TRANSPORT_WORDS[transport] ?? transport

/** The remotes the platform can connect to (a package runs locally, not here). */
const connectable = (remotes: ReadonlyArray<Remote> | null) => (remotes ?? []).filter((r) => r.type === "streamable-http" || r.type === "sse")

const serverPath = (place: Place, serverId: string) => placePath(place, `marketplace/${encodeURIComponent(serverId)}`)

/** The filters `plugin.catalog.browse` accepts, as the page's query (a search is a link to share). */
const FILTERS = ["search", "transport", "authKind", "status", "category", "registryId"] as const
type Filters = Partial<Record<(typeof FILTERS)[number], string>>

const filtersOf = (params: URLSearchParams): Filters => Object.fromEntries(FILTERS.flatMap((name) => (params.get(name) ? [[name, params.get(name)!]] : [])))

/** The listing a catalog server or pack is installed as, if it is. */
const installedAs = (listings: ReadonlyArray<Listing> | undefined, name: string, pack: boolean) =>
  listings?.find((l) => l.name === name && (l.pluginType === "capability") === pack)

/** Installs to the organization's allow-list (disabled) and says so. */
const useInstall = (place: Place) => {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (input: { catalogServerId: string } | { pluginId: string }) => invoke<Listing>(place, "plugin.org.install", input),
    onSettled: () => client.invalidateQueries({ queryKey: listingsKey(place) })
  })
}

const Installed = ({ place, listing }: { place: Place; listing: Listing }) => (
  <p className="installed">
    <span className="badge-pill installed-pill">Installed</span>{" "}
    {listing.enabled ? "and enabled for the organization." : "for the organization, not enabled yet."} <Link to={placePath(place, "settings/integrations")}>Manage it in Integrations</Link>
  </p>
)

const InstallOutcome = ({ place, installed }: { place: Place; installed: Listing | undefined }) => (
  <div role="status" aria-live="polite">
    {installed !== undefined && (
      <p className="ok-note">
        {listingName(installed)} is installed to the organization, disabled. <Link to={placePath(place, "settings/integrations")}>Enable it in Integrations</Link>.
      </p>
    )}
  </div>
)

const FilterForm = ({ place, filters, registries }: { place: Place; filters: Filters; registries: ReadonlyArray<Registry> }) => {
  // the words typed apply on Search (or Enter); a choice in a list applies at once
  const [search, setSearch] = useState(filters.search ?? "")
  const [category, setCategory] = useState(filters.category ?? "")
  const apply = (changed: Filters) => {
    const next: Filters = { ...filters, search: search.trim(), category: category.trim(), ...changed }
    const query = new URLSearchParams(Object.entries(next).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ""))
    const text = query.toString()
    navigate(`${placePath(place, "marketplace")}${text === "" ? "" : `?${text}`}`)
  }
  const submit = (event: FormEvent) => {
    event.preventDefault()
    apply({})
  }
  const select = (name: keyof Filters, label: string, options: ReadonlyArray<readonly [string, string]>) => (
    <Field label={label}>
      {(id) => (
        <select id={id} value={filters[name] ?? ""} onChange={(event) => apply({ [name]: event.target.value })}>
          {options.map(([value, words]) => (
            <option key={value} value={value}>
              {words}
            </option>
          ))}
        </select>
      )}
    </Field>
  )
  return (
    <form role="search" aria-label="Search the catalog" className="catalog-filters" onSubmit={submit}>
      <div className="filter-row">
        <Field label="Search" hint="Words of a server's name, title or description.">
          {(id, hint) => <input id={id} aria-describedby={hint} type="search" maxLength={200} value={search} onChange={(event) => setSearch(event.target.value)} />}
        </Field>
        <Field label="Category">
          {(id) => <input id={id} maxLength={100} value={category} onChange={(event) => setCategory(event.target.value)} />}
        </Field>
        <button type="submit" className="primary">
          Search
        </button>
      </div>
      <div className="filter-row">
        {select("transport", "Transport", [["", "Any"], ["streamable-http", "Streamable HTTP"], ["sse", "SSE"], ["stdio", "stdio (runs locally)"]])}
        {select("authKind", "Sign-in", [["", "Any"], ["none", AUTH_WORDS.none], ["secret", AUTH_WORDS.secret], ["oauth", AUTH_WORDS.oauth]])}
        {select("status", "Status", [["", "Active and deprecated"], ["active", "Active"], ["deprecated", "Deprecated"], ["deleted", "Deleted"]])}
        {registries.length > 1 && select("registryId", "Registry", [["", "All registries"], ...registries.map((r) => [r.registryId, r.name] as const)])}
      </div>
    </form>
  )
}

const Badges = ({ server }: { server: Pick<CatalogServer, "authKind" | "transportTypes" | "status" | "denylisted"> }) => (
  <p className="badges">
    {server.denylisted !== null && (
      <span className="badge-pill catalog-status-deleted" title={server.denylisted.reason}>
        Denylisted
      </span>
    )}
    <span className="badge-pill">{AUTH_WORDS[server.authKind]}</span>
    {server.transportTypes.map((transport) => (
      <span key={transport} className="badge-pill">
        {transportWords(transport)}
      </span>
    ))}
    {server.status !== "active" && <span className={`badge-pill catalog-status-${server.status}`}>{server.status === "deleted" ? "Deleted" : "Deprecated"}</span>}
  </p>
)

const ServerCard = ({ place, server, installed }: { place: Place; server: CatalogServer; installed: boolean }) => {
  const icon = server.icons.find((i) => i.src.startsWith("https:"))
  return (
    <li className="card catalog-card">
      <div className="card-head">
        {icon !== undefined && <img src={icon.src} alt="" width={32} height={32} loading="lazy" />}
        <h3>
          <Link to={serverPath(place, server.serverId)}>{server.title ?? server.name}</Link>
        </h3>
        {installed && <span className="badge-pill installed-pill">Installed</span>}
      </div>
      <p className="muted server-name">
        <code>{server.name}</code> · version {server.version}
      </p>
      {server.description !== "" && <p>{server.description}</p>}
      <Badges server={server} />
    </li>
  )
}

const Servers = ({ place, filters, listings }: { place: Place; filters: Filters; listings: ReadonlyArray<Listing> | undefined }) => {
  // the cursors of the pages before this one; the component is keyed by the filters, so new filters start over
  const [cursors, setCursors] = useState<ReadonlyArray<string>>([])
  const cursor = cursors[cursors.length - 1]
  const page = useQuery({
    queryKey: ["catalog", place.org, place.ws, filters, cursor ?? null],
    queryFn: () => invoke<{ servers: ReadonlyArray<CatalogServer>; nextCursor: string | null }>(place, "plugin.catalog.browse", { ...filters, limit: 20, ...(cursor === undefined ? {} : { cursor }) }),
    placeholderData: keepPreviousData
  })
  return (
    <section aria-labelledby="servers-heading" className="catalog-servers">
      <h2 id="servers-heading">MCP servers</h2>
      {page.isPending ? (
        <Loading what="the catalog" />
      ) : page.isError ? (
        <ErrorNote error={page.error} title="The catalog could not be loaded" />
      ) : (
        <>
          <p className="muted" role="status" aria-live="polite">
            {page.data.servers.length === 0
              ? "No server matches. The catalog fills as the registries sync; try other words or filters."
              : `Page ${cursors.length + 1}: ${page.data.servers.length} server${page.data.servers.length === 1 ? "" : "s"}${page.isPlaceholderData ? ", loading…" : ""}`}
          </p>
          <ul className="catalog-list">
            {page.data.servers.map((server) => (
              <ServerCard key={server.serverId} place={place} server={server} installed={installedAs(listings, server.name, false) !== undefined} />
            ))}
          </ul>
          <nav aria-label="Catalog pages" className="row">
            <button type="button" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
              Previous page
            </button>
            <button type="button" disabled={page.data.nextCursor === null || page.isPlaceholderData} onClick={() => page.data.nextCursor !== null && setCursors([...cursors, page.data.nextCursor])}>
              Next page
            </button>
          </nav>
        </>
      )}
    </section>
  )
}

const Packs = ({ place, search, listings }: { place: Place; search: string | undefined; listings: ReadonlyArray<Listing> | undefined }) => {
  const access = useAccess(place)
  const install = useInstall(place)
  const packs = useQuery({
    queryKey: ["catalog-packs", place.org, place.ws, search ?? null],
    queryFn: () => invoke<{ servers: ReadonlyArray<CatalogServer> }>(place, "plugin.catalog.browse", { pluginType: "capability", ...(search === undefined ? {} : { search }) })
  })
  return (
    <section aria-labelledby="packs-heading" className="catalog-packs">
      <h2 id="packs-heading">Capability packs</h2>
      <p className="muted">First-party capabilities (documents, images, video) the assistant and the API offer once a pack is installed and enabled.</p>
      <InstallOutcome place={place} installed={install.data} />
      <ErrorNote error={install.error} title="The pack was not installed" />
      {packs.isPending ? (
        <Loading what="the capability packs" />
      ) : packs.isError ? (
        <ErrorNote error={packs.error} title="The capability packs could not be loaded" />
      ) : packs.data.servers.length === 0 ? (
        <p>No pack matches.</p>
      ) : (
        <ul className="catalog-list">
          {packs.data.servers.map((pack) => {
            const listing = installedAs(listings, pack.name, true)
            return (
              <li key={pack.serverId} className="card catalog-card">
                <h3>{pack.title ?? pack.name}</h3>
                <p className="muted server-name">
                  <code>{pack.name}</code> · version {pack.version}
                  {pack.categories.length > 0 && <> · {pack.categories.join(", ")}</>}
                </p>
                <p>{pack.description}</p>
                {listing !== undefined ? (
                  <Installed place={place} listing={listing} />
                ) : (
                  access.can("plugin.org.install") && (
                    <button
                      type="button"
                      className="primary"
                      disabled={install.isPending}
                      onClick={() => install.mutate({ pluginId: pack.serverId })}
                      aria-label={`Install to organization: ${pack.title ?? pack.name}`}
                    >
                      Install to organization
                    </button>
                  )
                )}
              </li>
            )
          })}
        </ul>
      )}
    </section>
  )
}

const Browse = ({ place }: { place: Place }) => {
  const access = useAccess(place)
  const params = useQueryParams()
  const filters = filtersOf(params)
  const listings = useListings(place, access.can("plugin.org.list"))
  const registries = useQuery({
    queryKey: ["registries", place.org, place.ws],
    queryFn: () => invoke<{ registries: ReadonlyArray<Registry> }>(place, "plugin.registry.list"),
    enabled: access.can("plugin.registry.list")
  })
  return (
    <>
      <FilterForm key={params.toString()} place={place} filters={filters} registries={registries.data?.registries.filter((r) => r.enabled) ?? []} />
      <div className="catalog-columns">
        <Servers key={JSON.stringify(filters)} place={place} filters={filters} listings={listings.data} />
        <Packs place={place} search={filters.search} listings={listings.data} />
      </div>
    </>
  )
}

export const MarketplacePage = ({ place }: PageProps) => (
  <>
    <PageTitle actions={<Link to={placePath(place, "settings/integrations")}>Installed integrations</Link>}>Marketplace</PageTitle>
    <PluginManagersOnly place={place} capability="plugin.catalog.browse">
      <Browse place={place} />
    </PluginManagersOnly>
  </>
)

const InstallServer = ({ place, server }: { place: Place; server: ServerDetail }) => {
  const access = useAccess(place)
  const listings = useListings(place, access.can("plugin.org.list"))
  const install = useInstall(place)
  const listing = installedAs(listings.data, server.name, false)
  if (!access.can("plugin.org.install")) return null
  return (
    <section aria-labelledby="install-heading" className="card server-install">
      <h2 id="install-heading">Install</h2>
      <InstallOutcome place={place} installed={install.data} />
      <ErrorNote error={install.error} title="It was not installed" />
      {listing !== undefined ? (
        <Installed place={place} listing={listing} />
      ) : server.status === "deleted" ? (
        <p>This version is deleted from its registry and cannot be installed.</p>
      ) : connectable(server.remotes).length === 0 ? (
        <p>This server offers no remote endpoint (Streamable HTTP or SSE): it runs only as a local package, which the platform cannot connect to.</p>
      ) : (
        <>
          <p>
            Adds it to the organization's allow-list, disabled. Then enable it under Integrations{server.authKind === "secret" ? " and enter its secret" : ""}.
          </p>
          <button type="button" className="primary" disabled={install.isPending} onClick={() => install.mutate({ catalogServerId: server.serverId })}>
            {install.isPending ? "Installing…" : "Install to organization"}
          </button>
        </>
      )}
    </section>
  )
}

const ServerDetails = ({ place, server }: { place: Place; server: ServerDetail }) => (
  <>
    <p className="muted server-name">
      <code>{server.name}</code>
    </p>
    {server.description !== "" && <p className="server-lead">{server.description}</p>}
    <Badges server={server} />
    <dl className="plugin-facts">
      <dt>Version</dt>
      <dd>
        {server.version}
        {server.isLatest ? " (latest)" : ""}
      </dd>
      <dt>Published</dt>
      <dd>
        <Time at={server.publishedAt} />
      </dd>
      {server.categories.length > 0 && (
        <>
          <dt>Categories</dt>
          <dd>{server.categories.join(", ")}</dd>
        </>
      )}
      {server.repository !== null && (
        <>
          <dt>Repository</dt>
          <dd>
            <a href={server.repository.url} rel="noopener noreferrer" target="_blank">
              {server.repository.url}
            </a>
          </dd>
        </>
      )}
      {server.websiteUrl !== null && (
        <>
          <dt>Website</dt>
          <dd>
            <a href={server.websiteUrl} rel="noopener noreferrer" target="_blank">
              {server.websiteUrl}
            </a>
          </dd>
        </>
      )}
    </dl>
    <InstallServer place={place} server={server} />
    <section aria-labelledby="remotes-heading">
      <h2 id="remotes-heading">Remotes</h2>
      {(server.remotes ?? []).length === 0 ? (
        <p>None: it is offered only as a package to run locally.</p>
      ) : (
        <ul className="remotes">
          {(server.remotes ?? []).map((remote) => (
            <li key={`${remote.type} ${remote.url}`}>
              <strong>{transportWords(remote.type)}</strong> <span className="endpoint">{remote.url}</span>
              {(remote.headers ?? []).filter((h) => h.isSecret === true).map((h) => (
                <span key={h.name} className="muted">
                  {" "}
                  · needs a secret in the {h.name} header
                </span>
              ))}
            </li>
          ))}
        </ul>
      )}
      {(server.packages ?? []).length > 0 && (
        <p className="muted">
          Also packaged to run locally:{" "}
          {(server.packages ?? []).map((p) => [p.registryType, p.identifier, p.version].filter((part) => part !== undefined).join(" ")).join("; ")}
        </p>
      )}
    </section>
    <section aria-labelledby="versions-heading">
      <h2 id="versions-heading">Versions</h2>
      <div className="table-scroll" tabIndex={0}>
        <table>
          <caption className="visually-hidden">Versions of {server.name}</caption>
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {server.versions.map((v) => (
              <tr key={v.serverId}>
                <td>
                  {v.serverId === server.serverId ? (
                    <span aria-current="page">{v.version} (this page)</span>
                  ) : (
                    <Link to={serverPath(place, v.serverId)}>{v.version}</Link>
                  )}
                  {v.isLatest && " · latest"}
                </td>
                <td>{v.status}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
    <section aria-labelledby="readme-heading">
      <h2 id="readme-heading">README</h2>
      {server.readmeHtml === null ? (
        <p className="muted">No README is available for this server.</p>
      ) : (
        // readme_html is sanitized on the server (src/marketplace/CatalogReadme.ts: a strict allowlist,
        // no script, style or iframe, images made absolute) before it is stored; it is shown as given
        <div className="readme" dangerouslySetInnerHTML={{ __html: underReadmeHeading(server.readmeHtml) }} />
      )}
    </section>
  </>
)

/**
 * The README's headings moved under the page's "README" heading (its h1 an h3), so the page's
 * outline stays in order. The HTML is the server's sanitized output: every tag is well formed and a
 * `<` in text or an attribute is escaped, so only real heading tags match.
 */
const underReadmeHeading = (html: string) =>
  html.replace(/<(\/?)h([1-6])\b/gi, (_tag, close: string, level: string) => `<${close}h${Math.min(Number(level) + 2, 6)}`)

const SERVER_ID = /^mcat_[0-9a-f]{32}$/

export const ServerPage = ({ place, params }: PageProps) => {
  const serverId = params.serverId
  const server = useQuery({
    queryKey: ["catalog-server", place.org, place.ws, serverId],
    queryFn: () => invoke<ServerDetail>(place, "plugin.catalog.get", { serverId }),
    enabled: SERVER_ID.test(serverId)
  })
  return (
    <>
      <PageTitle actions={<Link to={placePath(place, "marketplace")}>Back to the marketplace</Link>}>{server.data?.title ?? server.data?.name ?? "Server"}</PageTitle>
      <PluginManagersOnly place={place} capability="plugin.catalog.get">
        {!SERVER_ID.test(serverId) ? (
          <p className="warn-note" role="note">
            “{serverId}” is not a catalog server. Find servers in the <Link to={placePath(place, "marketplace")}>marketplace</Link>.
          </p>
        ) : server.isPending ? (
          <Loading what="the server" />
        ) : server.isError ? (
          <ErrorNote error={server.error} title="The server could not be loaded" />
        ) : (
          <ServerDetails place={place} server={server.data} />
        )}
      </PluginManagersOnly>
    </>
  )
}
