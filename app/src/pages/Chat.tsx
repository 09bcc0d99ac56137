/**
 * The chat page (spec 2.2 to 2.4, 3.2, 4.1, 6.1, 7): the person's conversations on the side, the
 * open one's history, the turns streamed on this page after it, and the composer. A new
 * conversation gets its address (/chat/cnv_…) once its first turn has made it.
 */
import { useInfiniteQuery, useQuery, useQueryClient } from "@tanstack/react-query"
import { memo, useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore } from "react"
import type { PageProps } from "../App.tsx"
import { invoke, type Place } from "../api.ts"
import { placePath } from "../Layout.tsx"
import { Link, navigate } from "../router.tsx"
import { ErrorNote, Loading, PageTitle } from "../ui.tsx"
import { COMPOSER_ID, Composer, type Outgoing } from "./chat/Composer.tsx"
import { CONVERSATIONS_KEY, type ConversationEntry, THREAD_KEY, type Thread } from "./chat/data.ts"
import { History, type Retried } from "./chat/History.tsx"
import { LiveMessage } from "./chat/Live.tsx"
import { LiveTurn, type TurnState } from "./chat/turn.ts"
import "./Chat.css"

/** A UUID v4 for the turn id (spec 2.2), also where `crypto.randomUUID` is missing (plain http). */
const newTurnId = (): string => {
  if (typeof crypto.randomUUID === "function") return crypto.randomUUID()
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  bytes[6] = (bytes[6] & 0x0f) | 0x40
  bytes[8] = (bytes[8] & 0x3f) | 0x80
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

const ConversationList = memo(({ place, current, onPick }: { place: Place; current: string | undefined; onPick: () => void }) => {
  const list = useInfiniteQuery({
    queryKey: CONVERSATIONS_KEY(place),
    queryFn: ({ pageParam }) =>
      invoke<{ conversations: ReadonlyArray<ConversationEntry>; nextCursor: string | null }>(place, "conversation.list", pageParam === null ? {} : { cursor: pageParam }),
    initialPageParam: null as string | null,
    getNextPageParam: (page) => page.nextCursor
  })
  const conversations = list.data?.pages.flatMap((page) => page.conversations) ?? []
  return (
    <>
      <h2 id="conversations-heading">Conversations</h2>
      <Link to={placePath(place, "chat")} className="new-chat" aria-current={current === undefined ? "page" : undefined} onClick={onPick}>
        + New chat
      </Link>
      {list.isPending && <Loading what="conversations" />}
      <ErrorNote error={list.error} title="Your conversations could not be loaded" />
      {list.isSuccess && conversations.length === 0 && <p className="muted small">No conversations yet.</p>}
      <ul className="conversation-list">
        {conversations.map((conversation) => (
          <li key={conversation.publicId}>
            <Link
              to={placePath(place, `chat/${conversation.publicId}`)}
              aria-current={conversation.publicId === current ? "page" : undefined}
              onClick={onPick}
            >
              <span className="conversation-title">{conversation.title === "" ? "Untitled" : conversation.title}</span>
              <small className="muted">{new Date(conversation.lastMessageAt).toLocaleString()}</small>
            </Link>
          </li>
        ))}
      </ul>
      {list.hasNextPage && (
        <button type="button" onClick={() => void list.fetchNextPage()} disabled={list.isFetchingNextPage}>
          {list.isFetchingNextPage ? "Loading…" : "Show older"}
        </button>
      )}
    </>
  )
})

const idle = () => () => {}
const noPhase = () => undefined

/** The turns streamed on this page, and the conversation they belong to (null until the first has made it). */
interface Session {
  readonly conversationId: string | null
  readonly turns: ReadonlyArray<LiveTurn>
}

export const ChatPage = ({ place, params }: PageProps) => {
  const conversationId = params.conversationId as string | undefined
  const client = useQueryClient()
  const [session, setSession] = useState<Session>({ conversationId: null, turns: [] })
  const [stopping, setStopping] = useState(false)
  const [stopNote, setStopNote] = useState<unknown>(null)
  const [listOpen, setListOpen] = useState(false)
  const current = useRef(conversationId)
  current.current = conversationId

  const turns = session.conversationId === (conversationId ?? null) ? session.turns : []
  const last = turns.at(-1)
  const phase = useSyncExternalStore(last?.subscribe ?? idle, last === undefined ? noPhase : () => last.getState().phase)
  const busy = phase === "sending" || phase === "streaming"
  useEffect(() => {
    if (!busy) setStopping(false)
  }, [busy])

  const thread = useQuery({
    queryKey: THREAD_KEY(place, conversationId ?? ""),
    queryFn: () => invoke<Thread>(place, "conversation.get", { conversationId }),
    enabled: conversationId !== undefined,
    // a turn still running elsewhere (another tab, or before a reload) shows its reply once it ends
    refetchInterval: (query) => (query.state.data?.runs.some((run) => run.status === "running") ? 3000 : false)
  })

  /** After a turn: the lists change, and a first turn gives the conversation its address. */
  const finished = useCallback(
    async (turn: LiveTurn, state: TurnState) => {
      void client.invalidateQueries({ queryKey: CONVERSATIONS_KEY(place) })
      let made = state.request.conversationId ?? state.result?.conversationPublicId
      if (made === undefined && state.runId !== undefined) {
        // a first turn that failed still made its conversation: find it by the run
        made = await invoke<{ conversationId: string }>(place, "run.get", { runId: state.runId }).then(
          (run) => run.conversationId,
          () => undefined
        )
      }
      if (made === undefined) return
      await client.invalidateQueries({ queryKey: THREAD_KEY(place, made) })
      if (state.request.conversationId !== null) return
      const conversation = made
      setSession((now) => (now.turns.includes(turn) ? { ...now, conversationId: conversation } : now))
      // only while the person is still at the new chat it started from (not on another page since)
      if (window.location.pathname === placePath(place, "chat")) {
        const refocus = document.activeElement?.id === COMPOSER_ID
        navigate(placePath(place, `chat/${conversation}`), { replace: true })
        // the frame moves focus to the heading on a new address; this is the same conversation
        if (refocus) setTimeout(() => document.getElementById(COMPOSER_ID)?.focus(), 0)
      }
    },
    [client, place]
  )

  const start = useCallback(
    (request: { content: string; attachments: ReadonlyArray<string>; tier?: string; effort?: string }, files: ReadonlyArray<string> | number) => {
      const conversation = current.current ?? null
      const turn = new LiveTurn({ ...request, conversationId: conversation, turnId: newTurnId() }, files)
      setStopNote(null)
      setSession((now) => (now.conversationId === conversation ? { conversationId: conversation, turns: [...now.turns, turn] } : { conversationId: conversation, turns: [turn] }))
      void turn.run(place).then((state) => finished(turn, state))
    },
    [place, finished]
  )

  const send = useCallback(
    (outgoing: Outgoing) =>
      start(
        { content: outgoing.content, attachments: outgoing.attachments.map((file) => file.fileId), tier: outgoing.tier, effort: outgoing.effort },
        outgoing.attachments.map((file) => file.name)
      ),
    [start]
  )
  const retryLive = useCallback((turn: LiveTurn) => {
    const { request, files } = turn.getState()
    start({ content: request.content, attachments: request.attachments, tier: request.tier, effort: request.effort }, files)
  }, [start])
  const retryRecorded = useCallback((request: Retried) => start(request, request.attachments.length), [start])

  const stop = useCallback(async () => {
    if (last === undefined) return
    setStopping(true)
    setStopNote(null)
    try {
      const { found } = await invoke<{ found: boolean }>(place, "assistant.turn.cancel", { turnId: last.getState().request.turnId })
      if (!found) setStopNote(new Error("the turn could not be stopped: it is not running any more"))
    } catch (error) {
      setStopNote(error)
      setStopping(false)
    }
  }, [last, place])

  const hiddenKey = turns.map((turn) => turn.getState().runId ?? "").join(" ")
  const hidden = useMemo(() => new Set(hiddenKey.split(" ")), [hiddenKey])
  const closeList = useCallback(() => setListOpen(false), [])

  return (
    <div className="chat">
      <PageTitle
        actions={
          <button type="button" className="conversations-toggle" aria-expanded={listOpen} aria-controls="chat-conversations" onClick={() => setListOpen(!listOpen)}>
            Conversations
          </button>
        }
      >
        Chat
      </PageTitle>
      <div className="chat-body">
        <aside id="chat-conversations" aria-labelledby="conversations-heading" className={listOpen ? "open" : undefined}>
          <ConversationList place={place} current={conversationId} onPick={closeList} />
        </aside>
        <section className="chat-main">
          <h2 className="visually-hidden">{thread.data?.title || "New conversation"}</h2>
          <div role="log" aria-label="Conversation" className="thread">
            {conversationId === undefined && turns.length === 0 && (
              <p className="muted">Ask the assistant anything. It can use this workspace's tools for you, and asks before anything risky.</p>
            )}
            {thread.isPending && conversationId !== undefined && turns.length === 0 && <Loading what="the conversation" />}
            <ErrorNote error={thread.error} title="This conversation could not be loaded" />
            {thread.data !== undefined && (
              <History place={place} thread={thread.data} hidden={hidden} onRetry={busy || turns.length > 0 ? undefined : retryRecorded} />
            )}
            {turns.map((turn) => (
              <LiveMessage key={turn.getState().request.turnId} place={place} turn={turn} onRetry={turn === last && !busy ? retryLive : undefined} />
            ))}
          </div>
          <ErrorNote error={stopNote} title="Not stopped" />
          <Composer place={place} busy={busy} stopping={stopping} onSend={send} onStop={stop} />
        </section>
      </div>
    </div>
  )
}
