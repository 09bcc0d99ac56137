/**
 * An automation's run history (`automation.get`'s recent runs) and one run's step timeline
 * (`automation.get_run`, followed live while it runs): every attempt at every step with its
 * status, duration and error, a form to answer a `human_input` step that waits
 * (`automation.respond`), and Approve and Deny for a call parked for the approval of the person the
 * run acts for (`automation.resolve_approval`).
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query"
import { useState } from "react"
import { invoke, type Place } from "../../api.ts"
import { useAccount } from "../../session.tsx"
import { ErrorNote, Loading, Time } from "../../ui.tsx"
import { useMembers } from "./StepsEditor.tsx"
import { duration, EVENT_WORDS, isActive, type Run, type RunStatus, type RunTrigger, type StepRecord } from "./model.ts"

export const automationKey = (place: Place, automationId: string) => ["automation", place.org, place.ws, automationId] as const
const runKey = (place: Place, runId: string) => ["automation-run", place.org, place.ws, runId] as const

const STATUS_WORDS: Readonly<Record<RunStatus | StepRecord["status"], string>> = {
  running: "Running",
  waiting: "Waiting for a person",
  succeeded: "Succeeded",
  failed: "Failed",
  skipped: "Skipped"
}

export const StatusBadge = ({ status }: { status: RunStatus }) => <span className={`badge-pill status-${status}`}>{STATUS_WORDS[status]}</span>

const triggerWords = (trigger: RunTrigger): string => {
  switch (trigger.type) {
    case "event":
      return `${trigger.label} ${trigger.nodeId} ${EVENT_WORDS[trigger.eventType]}`
    case "schedule":
      return `Schedule tick ${new Date(trigger.tick).toLocaleString()}`
    case "api":
      return trigger.payload === null ? "API call" : `API call with ${JSON.stringify(trigger.payload).slice(0, 80)}`
  }
}

/** A duration; one still going says so. */
const elapsed = (from: string | null, to: string | null) => (to === null && from !== null ? `${duration(from, null)} so far` : duration(from, to))

interface HistoryProps {
  readonly place: Place
  readonly runs: ReadonlyArray<Run>
  readonly selected: string | undefined
  readonly onSelect: (runId: string | undefined) => void
  readonly canRespond: boolean
}

export const RunHistory = ({ place, runs, selected, onSelect, canRespond }: HistoryProps) => (
  <section aria-labelledby="runs-heading">
    <h2 id="runs-heading">Runs</h2>
    {runs.length === 0 ? (
      <p className="muted">No runs yet.</p>
    ) : (
      <div className="table-scroll" tabIndex={0}>
        <table>
          <caption className="visually-hidden">Recent runs, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Status</th>
              <th scope="col">Trigger</th>
              <th scope="col">Duration</th>
              <th scope="col">Steps</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((run) => (
              <tr key={run.runId} className={run.runId === selected ? "selected" : undefined}>
                <td>
                  <Time at={run.startedAt ?? run.createdAt} />
                </td>
                <td>
                  <StatusBadge status={run.status} />
                </td>
                <td>{triggerWords(run.trigger)}</td>
                <td>{elapsed(run.startedAt, run.endedAt)}</td>
                <td>
                  <button
                    type="button"
                    aria-expanded={run.runId === selected}
                    aria-controls="run-detail"
                    onClick={() => onSelect(run.runId === selected ? undefined : run.runId)}
                    aria-label={`${run.runId === selected ? "Hide steps" : "Show steps"} of the run started ${new Date(run.startedAt ?? run.createdAt).toLocaleString()}`}
                  >
                    {run.runId === selected ? "Hide steps" : "Show steps"}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    )}
    {selected !== undefined && <RunDetail place={place} runId={selected} canRespond={canRespond} />}
  </section>
)

const RunDetail = ({ place, runId, canRespond }: { place: Place; runId: string; canRespond: boolean }) => {
  const run = useQuery({
    queryKey: runKey(place, runId),
    queryFn: () => invoke<Run & { automationId: string }>(place, "automation.get_run", { runId }),
    refetchInterval: (query) => (query.state.data === undefined || isActive(query.state.data.status) ? 1000 : false)
  })
  return (
    <section id="run-detail" className="card run-detail" aria-labelledby="run-heading">
      <h3 id="run-heading">
        Run <code>{runId}</code>
      </h3>
      {run.isPending ? (
        <Loading what="the run" />
      ) : run.isError ? (
        <ErrorNote error={run.error} title="The run could not be loaded" />
      ) : (
        <>
          <p role="status">
            <StatusBadge status={run.data.status} /> {triggerWords(run.data.trigger)}, started <Time at={run.data.startedAt ?? run.data.createdAt} />
            {run.data.endedAt !== null && <>, took {duration(run.data.startedAt, run.data.endedAt)}</>}
          </p>
          {run.data.error !== null && (
            <p className="error-note">
              {run.data.error.step === undefined ? "" : `Step '${run.data.error.step}' failed: `}
              {run.data.error.message} ({run.data.error.code})
            </p>
          )}
          <Timeline place={place} run={run.data} canRespond={canRespond} />
        </>
      )}
    </section>
  )
}

const Timeline = ({ place, run, canRespond }: { place: Place; run: Run; canRespond: boolean }) =>
  run.steps.length === 0 ? (
    <p className="muted">{run.status === "skipped" ? "Skipped: the previous scheduled run was still going." : "No step ran (a blank playbook)."}</p>
  ) : (
    <div className="table-scroll" tabIndex={0}>
      <table className="timeline">
        <caption>Step timeline</caption>
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col">Attempt</th>
            <th scope="col">Status</th>
            <th scope="col">Duration</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {run.steps.map((record) => (
            <tr key={`${record.index}:${record.attempt}`}>
              <th scope="row">
                {record.index + 1}. {record.name} <span className="muted">({record.stepType})</span>
              </th>
              <td>{record.attempt}</td>
              <td>
                <StatusBadge status={record.status} />
              </td>
              <td>{elapsed(record.startedAt, record.endedAt)}</td>
              <td>
                <StepDetails place={place} run={run} record={record} canRespond={canRespond} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )

const StepDetails = ({ place, run, record, canRespond }: { place: Place; run: Run; record: StepRecord; canRespond: boolean }) => {
  if (record.error !== null) {
    return (
      <span className="step-error">
        {record.error.message} <span className="muted">({record.error.code})</span>
      </span>
    )
  }
  if (record.status === "waiting" && record.input !== null) {
    return canRespond ? <Respond place={place} run={run} record={record} /> : <span>Waits for an answer: {record.input.prompt}</span>
  }
  if (record.status === "waiting" && record.approval !== undefined) {
    // the roles that answer an input answer an approval too (a person of the workspace who writes)
    return canRespond ? (
      <Decide place={place} run={run} record={record} />
    ) : (
      <span>
        Waits for approval to call <code>{record.approval.capability}</code>
      </span>
    )
  }
  if (record.output === null || record.output === undefined) return <span className="muted">—</span>
  return (
    <details>
      <summary>Output</summary>
      <pre>{JSON.stringify(record.output, null, 2)}</pre>
    </details>
  )
}

/** Sends a person's answer to what the run waits for, then reads the run and its automation again. */
const useAnswer = <I extends object>(place: Place, run: Run, capability: string) => {
  const client = useQueryClient()
  return useMutation({
    mutationFn: (input: I) => invoke<{ status: RunStatus }>(place, capability, { runId: run.runId, ...input }),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: runKey(place, run.runId) })
      void client.invalidateQueries({ queryKey: ["automation", place.org, place.ws] })
    }
  })
}

/** A call parked for approval: what it would do; only the person the run acts for may answer. */
const Decide = ({ place, run, record }: { place: Place; run: Run; record: StepRecord }) => {
  const account = useAccount()
  const decide = useAnswer<{ decision: "approved" | "denied" }>(place, run, "automation.resolve_approval")
  const approval = record.approval!
  const mine = approval.approver === account.data?.userId
  return (
    <div className="respond">
      <p>
        <strong>
          Waits for approval to call <code>{approval.capability}</code>
        </strong>
        <br />
        <span className="muted">
          {mine ? "Asked of you: the run acts for you" : "Read-only: only the person the run acts for may answer"}; answer by <Time at={approval.expiresAt} />.
        </span>
      </p>
      <pre>{JSON.stringify(approval.input, null, 2)}</pre>
      {mine && (
        <>
          <button type="button" className="primary" disabled={decide.isPending} onClick={() => decide.mutate({ decision: "approved" })}>
            Approve
          </button>{" "}
          <button type="button" disabled={decide.isPending} onClick={() => decide.mutate({ decision: "denied" })}>
            Deny
          </button>
          <ErrorNote error={decide.error} title="Your decision was not taken" />
        </>
      )}
    </div>
  )
}

const Respond = ({ place, run, record }: { place: Place; run: Run; record: StepRecord }) => {
  const account = useAccount()
  const [answer, setAnswer] = useState("")
  const respond = useAnswer<{ response: string }>(place, run, "automation.respond")
  const id = `answer-${run.runId}-${record.index}-${record.attempt}`
  // named as the workspace knows them; an id only when the person is not (or no longer) in it
  const members = useMembers(place)
  const asked = record.input!.assignee
  const person = members.data?.members.find((member) => member.userId === asked)
  const assignee = asked === account.data?.userId ? "you" : person === undefined ? asked : `${person.name} (${person.email})`
  return (
    <form
      className="respond"
      onSubmit={(event) => {
        event.preventDefault()
        respond.mutate({ response: answer })
      }}
    >
      <p>
        <strong>{record.input!.prompt}</strong>
        <br />
        <span className="muted">
          Asked of {assignee}; answer by <Time at={record.input!.expiresAt} />.
        </span>
      </p>
      <label htmlFor={id}>Your answer to '{record.name}'</label>
      <textarea id={id} rows={2} value={answer} onChange={(event) => setAnswer(event.target.value)} required />
      <button type="submit" className="primary" disabled={respond.isPending || answer.trim() === ""}>
        {respond.isPending ? "Sending…" : "Respond"}
      </button>
      <ErrorNote error={respond.error} title="Your answer was not taken" />
    </form>
  )
}
