/**
 * The frame of every signed-in page: a skip link, the workspace switcher, the navigation (only the
 * pages the person's roles allow), the notification bell with its unread count, and sign-out. On a
 * phone-width screen the navigation folds behind a Menu button.
 */
import { useQuery } from "@tanstack/react-query"
import { type ReactNode, useEffect, useRef, useState } from "react"
import { invoke, type Place } from "./api.ts"
import { Link, navigate, useLocation } from "./router.tsx"
import { useAccess, useAccount, useSignOut } from "./session.tsx"
import { ErrorNote, Icon, PageErrorBoundary } from "./ui.tsx"

interface NavEntry {
  readonly path: string
  readonly label: string
  /** Shown only to those who may invoke it. */
  readonly needs?: string
}

const NAV: ReadonlyArray<NavEntry> = [
  { path: "chat", label: "Chat", needs: "ask_assistant" },
  { path: "approvals", label: "Approvals", needs: "approval.list" },
  { path: "automations", label: "Automations", needs: "automation.list" },
  { path: "marketplace", label: "Marketplace", needs: "plugin.catalog.browse" },
  { path: "settings/integrations", label: "Integrations", needs: "plugin.org.list" },
  { path: "settings/keys", label: "API keys", needs: "api_key.list" },
  { path: "audit", label: "Audit log", needs: "audit.list" },
  { path: "cluster", label: "Cluster", needs: "cluster.get" },
  { path: "billing", label: "Usage & billing", needs: "spend.get" },
  { path: "settings/security", label: "Security" }
]

export const placePath = (place: Place, rest: string) => `/${encodeURIComponent(place.org)}/${encodeURIComponent(place.ws)}/${rest}`

export const UNREAD_KEY = (place: Place) => ["notifications", place.org, place.ws, "unread"] as const

const Bell = ({ place }: { place: Place }) => {
  const unread = useQuery({
    queryKey: UNREAD_KEY(place),
    // the count is of every unread notice, whatever the page's size
    queryFn: () => invoke<{ unreadCount: number }>(place, "notifications.list", { unread: true, limit: 1 }),
    refetchInterval: 15_000
  })
  const count = unread.data?.unreadCount ?? 0
  return (
    <Link to={placePath(place, "notifications")} className="bell" aria-label={count === 0 ? "Notifications, none unread" : `Notifications, ${count} unread`}>
      <Icon name="bell" size={22} />
      {count > 0 && (
        <span className="badge" aria-hidden="true">
          {count > 99 ? "99+" : count}
        </span>
      )}
    </Link>
  )
}

const WorkspaceSwitcher = ({ place }: { place: Place | undefined }) => {
  const account = useAccount()
  const options = (account.data?.memberships ?? []).flatMap((org) => org.workspaces.map((ws) => ({ org, ws })))
  if (options.length === 0) return null
  const value = place === undefined ? "" : `${place.org}/${place.ws}`
  return (
    <label className="switcher">
      <span className="visually-hidden">Workspace</span>
      <select value={value} onChange={(event) => navigate(`/${event.target.value}/chat`)}>
        {place === undefined && <option value="">Choose a workspace</option>}
        {options.map(({ org, ws }) => (
          <option key={`${org.slug}/${ws.slug}`} value={`${org.slug}/${ws.slug}`}>
            {org.name} / {ws.name}
          </option>
        ))}
      </select>
    </label>
  )
}

/** The workspace cannot be entered (not a member, no such workspace, two-factor or SSO required): said once, for every page. */
const PlaceRefused = ({ error }: { error: unknown }) => (
  <>
    <h1>This workspace cannot be opened</h1>
    <ErrorNote error={error} />
    <p>
      <Link to="/">Go to your workspaces</Link>
    </p>
  </>
)

export const Layout = ({ place, children }: { place: Place | undefined; children: ReactNode }) => {
  const location = useLocation()
  const signOut = useSignOut()
  const account = useAccount()
  const access = useAccess(place)
  const [menuOpen, setMenuOpen] = useState(false)
  const main = useRef<HTMLElement>(null)

  // a new page: close the menu and move focus to its heading, as a page load would
  useEffect(() => {
    setMenuOpen(false)
    const heading = main.current?.querySelector<HTMLElement>("h1")
    if (heading !== null && heading !== undefined) {
      if (!heading.hasAttribute("tabindex")) heading.tabIndex = -1
      heading.focus({ preventScroll: true })
    }
  }, [location])

  const entries = place === undefined ? [] : NAV.filter((entry) => entry.needs === undefined || access.can(entry.needs))
  return (
    <div className="shell">
      <a href="#main" className="skip-link">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/" className="brand">
          svc
        </Link>
        <WorkspaceSwitcher place={place} />
        <div className="topbar-end">
          {place !== undefined && <Bell place={place} />}
          <span className="who muted">{account.data?.email}</span>
          <button type="button" onClick={() => void signOut()}>
            Sign out
          </button>
          {place !== undefined && (
            <button type="button" className="menu-button" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
              Menu
            </button>
          )}
        </div>
      </header>
      <div className="body">
        {place !== undefined && (
          <nav id="nav" aria-label="Main" className={menuOpen ? "open" : undefined}>
            <ul>
              {entries.map((entry) => {
                const to = placePath(place, entry.path)
                const current = location === to || location.startsWith(`${to}/`)
                return (
                  <li key={entry.path}>
                    <Link to={to} aria-current={current ? "page" : undefined}>
                      {entry.label}
                    </Link>
                  </li>
                )
              })}
            </ul>
          </nav>
        )}
        <main id="main" ref={main}>
          <PageErrorBoundary resetKey={location}>{place !== undefined && access.isError ? <PlaceRefused error={access.error} /> : children}</PageErrorBoundary>
        </main>
      </div>
    </div>
  )
}

