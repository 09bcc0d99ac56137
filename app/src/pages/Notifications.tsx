/**
 * A person's notifications in the organization (spec 2.9, 4.5, 6.3.5): an automation waiting for
 * their input, a plugin credential needing re-authentication. Each links to what it is about in
 * the app (following it marks it read); each can be marked read or unread and archived. The bell
 * in the frame counts the unread ones (Layout's UNREAD_KEY), refreshed after every change here.
 */
import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query"
import { useState } from "react"
import type { PageProps } from "../App.tsx"
import { invoke, type Place } from "../api.ts"
import { UNREAD_KEY } from "../Layout.tsx"
import { Link } from "../router.tsx"
import { ErrorNote, Field, Loading, PageTitle, Time } from "../ui.tsx"
import "./Notifications.css"

interface Notice {
  readonly notificationId: string
  readonly kind: "system" | "approval" | "run" | "member" | "security"
  readonly title: string
  readonly body: string
  readonly deepLink: string | null
  readonly unread: boolean
  readonly archived: boolean
  readonly emailedAt: string | null
  readonly createdAt: string | null
  readonly resolvedAt: string | null
}

type Mark = "read" | "unread" | "archive" | "unarchive"

/** What `notifications.list` is asked for each choice of the Show list. */
const VIEWS = {
  open: { words: "Open", input: {} },
  unread: { words: "Unread only", input: { unread: true } },
  all: { words: "Open and answered", input: { all: true } },
  archived: { words: "Archived", input: { archived: true, all: true } }
} as const
type View = keyof typeof VIEWS

const KIND_WORDS: Record<Notice["kind"], string> = { system: "System", approval: "Approval", run: "Automation", member: "Membership", security: "Security" }

/** This page's lists (each view its own); the bell's count is UNREAD_KEY. */
const listKey = (place: Place) => ["notifications", place.org, place.ws, "list"] as const

/** Only a route of this app is followed (a deep link is an in-app path, never another site). */
const inAppRoute = (link: string | null) => (link !== null && link.startsWith("/") && !link.startsWith("//") ? link : undefined)

const NoticeItem = ({ notice, busy, onMark }: { notice: Notice; busy: boolean; onMark: (mark: Mark) => void }) => {
  const route = inAppRoute(notice.deepLink)
  const headingId = `notice-${notice.notificationId}`
  return (
    <li className={`card notice${notice.unread ? " unread" : ""}`}>
      <div className="notice-head">
        {notice.unread && <span className="badge-pill unread-pill">Unread</span>}
        <span className="badge-pill">{KIND_WORDS[notice.kind] ?? notice.kind}</span>
        <span className="muted">
          <Time at={notice.createdAt} />
        </span>
      </div>
      <h2 id={headingId} className="notice-title">
        {route === undefined ? (
          notice.title
        ) : (
          <Link to={route} onClick={() => notice.unread && onMark("read")}>
            {notice.title}
          </Link>
        )}
      </h2>
      <p>{notice.body}</p>
      {(notice.resolvedAt !== null || notice.emailedAt !== null) && (
        <p className="muted">
          {notice.resolvedAt !== null && (
            <>
              Answered <Time at={notice.resolvedAt} />.{" "}
            </>
          )}
          {notice.emailedAt !== null && "Also sent to you by email."}
        </p>
      )}
      <div className="row">
        <button type="button" disabled={busy} onClick={() => onMark(notice.unread ? "read" : "unread")} aria-label={`${notice.unread ? "Mark read" : "Mark unread"}: “${notice.title}”`}>
          {notice.unread ? "Mark read" : "Mark unread"}
        </button>
        <button type="button" disabled={busy} onClick={() => onMark(notice.archived ? "unarchive" : "archive")} aria-label={`${notice.archived ? "Unarchive" : "Archive"} “${notice.title}”`}>
          {notice.archived ? "Unarchive" : "Archive"}
        </button>
      </div>
    </li>
  )
}

const PAGE_SIZE = 50

export const NotificationsPage = ({ place }: PageProps) => {
  const client = useQueryClient()
  const [view, setView] = useState<View>("open")
  const notices = useInfiniteQuery({
    queryKey: [...listKey(place), view],
    queryFn: ({ pageParam }) =>
      invoke<{ notifications: ReadonlyArray<Notice>; nextCursor: string | null }>(place, "notifications.list", {
        ...VIEWS[view].input,
        limit: PAGE_SIZE,
        ...(pageParam === null ? {} : { cursor: pageParam })
      }),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    refetchInterval: 15_000
  })
  const shown = notices.data?.pages.flatMap((page) => page.notifications) ?? []
  const olderError = notices.isFetchNextPageError ? notices.error : null
  const mark = useMutation({
    mutationFn: ({ notice, mark }: { notice: Notice; mark: Mark }) => invoke(place, "notifications.mark", { notificationId: notice.notificationId, mark }),
    // runs even when following a link took the person to another page
    onSettled: () => Promise.all([client.invalidateQueries({ queryKey: UNREAD_KEY(place) }), client.invalidateQueries({ queryKey: listKey(place) })])
  })
  return (
    <>
      <PageTitle>Notifications</PageTitle>
      <div className="notice-filter">
        <Field label="Show">
          {(id) => (
            <select id={id} value={view} onChange={(event) => setView(event.target.value as View)}>
              {(Object.keys(VIEWS) as Array<View>).map((key) => (
                <option key={key} value={key}>
                  {VIEWS[key].words}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <ErrorNote error={mark.error} title="The notification was not changed" />
      {notices.isPending ? (
        <Loading what="your notifications" />
      ) : notices.isError ? (
        <ErrorNote error={notices.error} title="Your notifications could not be loaded" />
      ) : shown.length === 0 ? (
        <p role="status">{view === "archived" ? "Nothing is archived." : view === "unread" ? "You have read everything." : "No notifications."}</p>
      ) : (
        <>
          <ul className="notices" aria-label="Notifications">
            {shown.map((notice) => (
              <NoticeItem key={notice.notificationId} notice={notice} busy={mark.isPending} onMark={(m) => mark.mutate({ notice, mark: m })} />
            ))}
          </ul>
          {notices.hasNextPage && (
            <button type="button" onClick={() => void notices.fetchNextPage()} disabled={notices.isFetchingNextPage}>
              {notices.isFetchingNextPage ? "Loading older notifications…" : "Show older notifications"}
            </button>
          )}
          <ErrorNote error={olderError} title="Older notifications could not be loaded" />
        </>
      )}
    </>
  )
}
