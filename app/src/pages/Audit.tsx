/**
 * The organization's audit log (`audit.list`, Owner only): capability calls from every surface,
 * security events and automation runs, newest first, a page at a time. The filters live in the
 * address, so a filtered view is a link to share.
 */
import { useInfiniteQuery } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import type { PageProps } from "../App.tsx"
import { invoke, type Place } from "../api.ts"
import { placePath } from "../Layout.tsx"
import { Link, navigate, useQueryParams } from "../router.tsx"
import { type Account, useAccess, useAccount } from "../session.tsx"
import { ErrorNote, Field, Loading, PageTitle, Time } from "../ui.tsx"
import "./Audit.css"

interface Entry {
  readonly id: string
  readonly at: string
  readonly kind: "capability" | "security" | "playbook"
  readonly event: string | null
  readonly capability: string | null
  readonly surface: string | null
  readonly workspaceId: string | null
  readonly principalKind: string
  readonly apiKeyId: string | null
  readonly userId: string | null
  readonly outcome: string | null
  readonly errorTag: string | null
  readonly durationMs: number | null
  readonly detail: unknown
}

interface Page {
  readonly entries: ReadonlyArray<Entry>
  readonly nextCursor: string | null
}

/** The filters `audit.list` takes (src/audit/Audit.ts), as the address carries them. */
const TEXT_FILTERS = ["event", "capability", "userId", "apiKeyId"] as const
const CHOICE_FILTERS = {
  kind: [
    ["capability", "Capability calls"],
    ["security", "Security events"],
    ["playbook", "Automation runs"]
  ],
  surface: [
    ["api", "API"],
    ["mcp", "MCP"],
    ["agent", "Assistant (agent)"],
    ["a2a", "Agent-to-agent"],
    ["playbook", "Automation"]
  ],
  outcome: [
    ["succeeded", "Succeeded"],
    ["failed", "Failed"]
  ]
} as const
const TIME_FILTERS = ["since", "until"] as const
const FILTERS = [...Object.keys(CHOICE_FILTERS), ...TEXT_FILTERS, ...TIME_FILTERS]

const LABELS: Readonly<Record<string, string>> = {
  kind: "Kind",
  surface: "Surface",
  outcome: "Outcome",
  event: "Security event",
  capability: "Capability",
  userId: "Person (user id)",
  apiKeyId: "Key (aky_ id)",
  since: "From",
  until: "Until"
}

const HINTS: Readonly<Record<string, string>> = {
  event: "For example api_key.revoked",
  capability: "For example create_api_key"
}

const PAGE_SIZE = 50

/** The filters in the address, as the capability's input. */
const filtersOf = (params: URLSearchParams): Record<string, string> => {
  const filters: Record<string, string> = {}
  for (const name of FILTERS) {
    const value = params.get(name)?.trim()
    if (value !== undefined && value !== "") filters[name] = value
  }
  return filters
}

/** An ISO instant as a `datetime-local` value in the person's time zone, and back. */
const toLocalInput = (iso: string | undefined) => {
  if (iso === undefined) return ""
  const at = new Date(iso)
  if (Number.isNaN(at.getTime())) return ""
  return new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
}
const fromLocalInput = (local: string) => (local === "" ? "" : new Date(local).toISOString())

const FilterForm = ({ initial, onApply }: { initial: Record<string, string>; onApply: (filters: Record<string, string>) => void }) => {
  const [draft, setDraft] = useState<Record<string, string>>(() => ({
    ...initial,
    since: toLocalInput(initial.since),
    until: toLocalInput(initial.until)
  }))
  const set = (name: string, value: string) => setDraft((current) => ({ ...current, [name]: value }))
  const submit = (event: FormEvent) => {
    event.preventDefault()
    onApply({ ...draft, since: fromLocalInput(draft.since ?? ""), until: fromLocalInput(draft.until ?? "") })
  }
  return (
    <form onSubmit={submit} className="card audit-filters" aria-labelledby="filters-heading">
      <h2 id="filters-heading">Filters</h2>
      <div className="filter-grid">
        {Object.entries(CHOICE_FILTERS).map(([name, options]) => (
          <Field key={name} label={LABELS[name]}>
            {(id) => (
              <select id={id} value={draft[name] ?? ""} onChange={(event) => set(name, event.target.value)}>
                <option value="">Any</option>
                {options.map(([value, label]) => (
                  <option key={value} value={value}>
                    {label}
                  </option>
                ))}
              </select>
            )}
          </Field>
        ))}
        {TEXT_FILTERS.map((name) => (
          <Field key={name} label={LABELS[name]} hint={HINTS[name]}>
            {(id, hint) => <input id={id} aria-describedby={hint} value={draft[name] ?? ""} onChange={(event) => set(name, event.target.value)} spellCheck={false} />}
          </Field>
        ))}
        {TIME_FILTERS.map((name) => (
          <Field key={name} label={LABELS[name]}>
            {(id) => <input id={id} type="datetime-local" value={draft[name] ?? ""} onChange={(event) => set(name, event.target.value)} />}
          </Field>
        ))}
      </div>
      <button type="submit" className="primary">
        Apply filters
      </button>
    </form>
  )
}

/** Names for the ids an entry carries, where the person's own account knows them. */
const namer = (account: Account | null | undefined) => {
  const workspaces = new Map((account?.memberships ?? []).flatMap((org) => org.workspaces.map((ws) => [ws.workspaceId, `${org.name} / ${ws.name}`] as const)))
  return {
    workspace: (id: string | null) => (id === null ? "Organization" : (workspaces.get(id) ?? id)),
    person: (id: string | null) => (id === null ? null : id === account?.userId ? "you" : id)
  }
}

const EntryRow = ({ entry, names }: { entry: Entry; names: ReturnType<typeof namer> }) => {
  const person = names.person(entry.userId)
  return (
    <tr>
      <td>
        <Time at={entry.at} />
      </td>
      <td className="what">
        <code>{entry.event ?? entry.capability ?? "—"}</code>
        <div className="muted">{entry.kind === "security" ? "security event" : entry.kind === "playbook" ? "automation run" : "capability call"}</div>
      </td>
      <td>{names.workspace(entry.workspaceId)}</td>
      <td>
        {person !== null && <div>{person}</div>}
        {entry.apiKeyId !== null && (
          <div>
            key <code>{entry.apiKeyId}</code>
          </div>
        )}
        <div className="muted">{entry.principalKind}</div>
      </td>
      <td>{entry.surface ?? "—"}</td>
      <td>
        {entry.outcome === null ? (
          "—"
        ) : (
          <span className={entry.outcome === "failed" ? "outcome-failed" : undefined}>
            {entry.outcome}
            {entry.errorTag !== null && ` (${entry.errorTag})`}
          </span>
        )}
        {entry.durationMs !== null && <div className="muted">{Math.round(entry.durationMs)} ms</div>}
      </td>
      <td>
        {entry.detail === null || entry.detail === undefined ? (
          "—"
        ) : (
          <details>
            <summary>Detail</summary>
            <pre>{JSON.stringify(entry.detail, null, 2)}</pre>
          </details>
        )}
      </td>
    </tr>
  )
}

const AuditLog = ({ place, filters }: { place: Place; filters: Record<string, string> }) => {
  const account = useAccount()
  const names = namer(account.data)
  const log = useInfiniteQuery({
    queryKey: ["audit", place.org, place.ws, filters],
    queryFn: ({ pageParam }) => invoke<Page>(place, "audit.list", { ...filters, limit: PAGE_SIZE, ...(pageParam === null ? {} : { cursor: pageParam }) }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor
  })
  if (log.isPending) return <Loading what="the audit log" />
  // a failed "show older" keeps the pages already shown
  if (log.data === undefined) return <ErrorNote error={log.error} title="The audit log could not be loaded" />
  const entries = log.data.pages.flatMap((page) => page.entries)
  return (
    <section aria-labelledby="entries-heading">
      <h2 id="entries-heading">Entries</h2>
      <p role="status" aria-live="polite" className="muted">
        {entries.length === 0 ? "No entries match these filters." : `Showing ${entries.length} ${entries.length === 1 ? "entry" : "entries"}${log.hasNextPage ? "; more follow" : ""}.`}
      </p>
      {entries.length > 0 && (
        <div className="table-scroll audit-scroll" tabIndex={0}>
          <table className="audit-table">
            <caption className="visually-hidden">Audit log entries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">What</th>
                <th scope="col">Where</th>
                <th scope="col">Who</th>
                <th scope="col">Surface</th>
                <th scope="col">Outcome</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((entry) => (
                <EntryRow key={entry.id} entry={entry} names={names} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ErrorNote error={log.isFetchNextPageError ? log.error : null} title="More entries could not be loaded" />
      {log.hasNextPage && (
        <button type="button" onClick={() => void log.fetchNextPage()} disabled={log.isFetchingNextPage}>
          {log.isFetchingNextPage ? "Loading…" : "Show older entries"}
        </button>
      )}
    </section>
  )
}

export const AuditPage = ({ place }: PageProps) => {
  const access = useAccess(place)
  const params = useQueryParams()
  const filters = filtersOf(params)
  const here = placePath(place, "audit")
  const apply = (next: Record<string, string>) => {
    const query = new URLSearchParams(Object.entries(next).filter(([, value]) => value.trim() !== ""))
    navigate(query.size === 0 ? here : `${here}?${query}`)
  }
  const filtered = Object.keys(filters).length > 0
  return (
    <>
      <PageTitle actions={filtered ? <Link to={here}>Clear filters</Link> : undefined}>Audit log</PageTitle>
      {access.isPending ? (
        <Loading what="your access" />
      ) : !access.can("audit.list") ? (
        <p className="warn-note" role="note">
          Only organization Owners can read the audit log.
        </p>
      ) : (
        <>
          <FilterForm key={params.toString()} initial={filters} onApply={apply} />
          <AuditLog place={place} filters={filters} />
        </>
      )}
    </>
  )
}
