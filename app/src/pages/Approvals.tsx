/**
 * The approvals inbox: the workspace's tool calls parked for approval and still waiting
 * (`approval.list`), each with what it would do, who asked, when it expires and its conversation.
 * Only the person who asked may answer (spec 4.1 rule 6): theirs have Approve and Deny, the others
 * say why they are read-only.
 */
import { useInfiniteQuery } from "@tanstack/react-query"
import { useState } from "react"
import type { PageProps } from "../App.tsx"
import { invoke } from "../api.ts"
import { placePath } from "../Layout.tsx"
import { Link } from "../router.tsx"
import { ErrorNote, Loading, PageTitle, Time } from "../ui.tsx"
import { ApprovalCard } from "./chat/Cards.tsx"
import { APPROVALS_KEY, type PendingApproval } from "./chat/data.ts"
import "./Chat.css"

interface Answered {
  readonly approvalId: string
  readonly capability: string
  readonly words: string
}

export const ApprovalsPage = ({ place }: PageProps) => {
  const list = useInfiniteQuery({
    queryKey: APPROVALS_KEY(place),
    queryFn: ({ pageParam }) =>
      invoke<{ approvals: ReadonlyArray<PendingApproval>; nextCursor: string | null }>(place, "approval.list", pageParam === null ? {} : { cursor: pageParam }),
    initialPageParam: null as string | null,
    getNextPageParam: (page) => page.nextCursor,
    // calls expire and others park new ones
    refetchInterval: 15_000
  })
  // what this person answered here: the call leaves the list, its outcome stays in view
  const [answered, setAnswered] = useState<ReadonlyArray<Answered>>([])
  const approvals = list.data?.pages.flatMap((page) => page.approvals) ?? []

  return (
    <>
      <PageTitle>Approvals</PageTitle>
      <p className="muted">Tool calls the assistant parked until someone approves them. Only the person who asked may answer a call.</p>
      <div role="status">
        {answered.map((entry) => (
          <p key={entry.approvalId} className="ok-note">
            <code>{entry.capability}</code>: {entry.words}
          </p>
        ))}
      </div>
      <h2>Waiting for an answer</h2>
      {list.isPending && <Loading what="approvals" />}
      <ErrorNote error={list.error} title="The approvals could not be loaded" />
      {list.isSuccess && approvals.length === 0 && <p>Nothing is waiting for approval in this workspace.</p>}
      {approvals.map((approval) => (
        <ApprovalCard
          key={approval.approvalId}
          place={place}
          approval={approval}
          readOnly={approval.canAnswer ? undefined : "Read-only: only the person who asked may answer this call."}
          onAnswered={(words) => setAnswered((now) => [...now, { approvalId: approval.approvalId, capability: approval.capability, words }])}
        >
          <p className="small">
            Asked by {approval.canAnswer ? "you" : approval.requestedByName} at <Time at={approval.parkedAt} />
            {approval.conversationId !== null && (
              <>
                {" "}
                (<Link to={placePath(place, `chat/${approval.conversationId}`)}>open its conversation</Link>)
              </>
            )}
          </p>
        </ApprovalCard>
      ))}
      {list.hasNextPage && (
        <button type="button" onClick={() => void list.fetchNextPage()} disabled={list.isFetchingNextPage}>
          {list.isFetchingNextPage ? "Loading…" : "Show more"}
        </button>
      )}
    </>
  )
}
