/**
 * Automations (spec 2.8, 3.4, 4.4): the workspace's list, a new automation, and an automation's
 * page: whether it is enabled (what an AI made waits for a person's Enable), Run now for an API
 * trigger, its runs with their step timelines, and its settings.
 */
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query"
import { useEffect, useState } from "react"
import type { PageProps } from "../App.tsx"
import { ApiError, invoke, type Place } from "../api.ts"
import { placePath } from "../Layout.tsx"
import { Link, navigate } from "../router.tsx"
import { useAccess } from "../session.tsx"
import { ErrorNote, Field, Loading, PageTitle, Time } from "../ui.tsx"
import { AutomationForm, listKey } from "./automations/AutomationForm.tsx"
import { type Automation, type AutomationDetail, isActive, type ListedAutomation, triggerSummary } from "./automations/model.ts"
import { automationKey, RunHistory, StatusBadge } from "./automations/Runs.tsx"
import "./Automations.css"

const PAGE_SIZE = 50

const AI_WAITING = "waiting for a person's Enable"

export const AutomationsPage = ({ place }: PageProps) => {
  const access = useAccess(place)
  const [show, setShow] = useState<"all" | "enabled" | "disabled">("all")
  const list = useInfiniteQuery({
    queryKey: [...listKey(place), show],
    queryFn: ({ pageParam }) =>
      invoke<{ automations: ReadonlyArray<ListedAutomation>; nextCursor: string | null }>(place, "automation.list", {
        limit: PAGE_SIZE,
        ...(pageParam === undefined ? {} : { cursor: pageParam }),
        ...(show === "all" ? {} : { enabled: show === "enabled" })
      }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    refetchInterval: 15_000
  })
  const automations = list.data?.pages.flatMap((page) => page.automations) ?? []
  return (
    <>
      <PageTitle
        actions={
          access.can("automation.create") ? (
            <Link to={placePath(place, "automations/new")} className="button-link primary">
              New automation
            </Link>
          ) : undefined
        }
      >
        Automations
      </PageTitle>
      <p className="muted">A playbook of steps that runs when its trigger fires: an event on a node, a schedule, or an API call.</p>
      <div className="row">
        <label htmlFor="show">Show</label>
        <select id="show" value={show} onChange={(event) => setShow(event.target.value as typeof show)}>
          <option value="all">All</option>
          <option value="enabled">Enabled only</option>
          <option value="disabled">Disabled only</option>
        </select>
      </div>
      {list.isPending ? (
        <Loading what="automations" />
      ) : list.isError ? (
        <ErrorNote error={list.error} title="The automations could not be loaded" />
      ) : automations.length === 0 ? (
        <p>No automations {show === "all" ? "yet" : `are ${show}`}.</p>
      ) : (
        <div className="table-scroll" tabIndex={0}>
          <table className="automations">
            <caption className="visually-hidden">Automations of this workspace</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Trigger</th>
                <th scope="col">State</th>
                <th scope="col">Last run</th>
              </tr>
            </thead>
            <tbody>
              {automations.map((automation) => (
                <tr key={automation.automationId}>
                  <th scope="row">
                    <Link to={placePath(place, `automations/${automation.automationId}`)}>{automation.name}</Link>
                    {automation.description !== "" && <div className="muted small">{automation.description}</div>}
                  </th>
                  <td>{triggerSummary(automation.trigger)}</td>
                  <td>
                    <EnabledBadge automation={automation} />
                    {!automation.enabled && automation.origin === "ai" && <div className="small">Made by an AI, {AI_WAITING}</div>}
                  </td>
                  <td>
                    {automation.lastRun === null ? (
                      <span className="muted">Never</span>
                    ) : (
                      <>
                        <StatusBadge status={automation.lastRun.status} /> <Time at={automation.lastRun.createdAt} />
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.hasNextPage && (
        <button type="button" onClick={() => void list.fetchNextPage()} disabled={list.isFetchingNextPage}>
          {list.isFetchingNextPage ? "Loading…" : "Show more"}
        </button>
      )}
    </>
  )
}

const EnabledBadge = ({ automation }: { automation: Automation }) => (
  <span className={`badge-pill ${automation.enabled ? "state-on" : "state-off"}`}>{automation.enabled ? "Enabled" : "Disabled"}</span>
)

export const NewAutomationPage = ({ place }: PageProps) => (
  <>
    <PageTitle actions={<Link to={placePath(place, "automations")}>All automations</Link>}>New automation</PageTitle>
    <p className="muted">It is created disabled unless you tick Enable below; you can enable it later on its page.</p>
    <AutomationForm place={place} automation={undefined} onSaved={(saved) => navigate(placePath(place, `automations/${saved.automationId}`))} />
  </>
)

/** An automation's page; its run deep link (`…/runs/:runId`) opens that run's steps. */
export const AutomationPage = (props: PageProps) => <AutomationView key={props.params.automationId} {...props} />

const AutomationView = ({ place, params }: PageProps) => {
  const { automationId } = params
  const access = useAccess(place)
  const [selectedRun, setSelectedRun] = useState<string | undefined>(params.runId)
  useEffect(() => {
    if (params.runId !== undefined) setSelectedRun(params.runId)
  }, [params.runId])
  const automation = useQuery({
    queryKey: automationKey(place, automationId),
    queryFn: () => invoke<AutomationDetail>(place, "automation.get", { automationId }),
    // runs arrive on their own (events, schedules): followed closely while one is going
    refetchInterval: (query) => (query.state.data?.recentRuns.some((run) => isActive(run.status)) ? 1000 : 5000)
  })
  if (automation.isPending) return <Loading what="the automation" />
  if (automation.isError) {
    return (
      <>
        <PageTitle>Automation</PageTitle>
        <ErrorNote
          error={automation.error}
          title={automation.error instanceof ApiError && automation.error.status === 404 ? "There is no such automation in this workspace" : "The automation could not be loaded"}
        />
        <Link to={placePath(place, "automations")}>All automations</Link>
      </>
    )
  }
  const data = automation.data
  const canWrite = access.can("automation.update")
  return (
    <>
      <PageTitle actions={<Link to={placePath(place, "automations")}>All automations</Link>}>{data.name}</PageTitle>
      {data.description !== "" && <p>{data.description}</p>}
      <p>
        <strong>Trigger:</strong> {triggerSummary(data.trigger)}. <strong>Steps:</strong> {data.steps.length === 0 ? "none" : data.steps.map((s) => s.name).join(" → ")}.
      </p>
      <Gate place={place} automation={data} canWrite={canWrite} />
      {data.trigger.type === "api" && canWrite && access.can("automation.trigger") && <RunNow place={place} automation={data} onStarted={setSelectedRun} />}
      <RunHistory place={place} runs={data.recentRuns} selected={selectedRun} onSelect={setSelectedRun} canRespond={access.can("automation.respond")} />
      {canWrite && (
        <section aria-labelledby="settings-heading">
          <h2 id="settings-heading">Settings</h2>
          {data.webhookSecret !== undefined && data.steps.some((s) => s.stepType === "webhook") && (
            <p>
              Webhook deliveries are signed with <code className="secret">{data.webhookSecret}</code> (Standard Webhooks).
            </p>
          )}
          <AutomationForm key={data.automationId} place={place} automation={data} onSaved={() => undefined} />
          {access.can("automation.delete") && <Delete place={place} automation={data} />}
        </section>
      )}
    </>
  )
}

/** Enable and Disable (spec 3.4): only a person's own sign-in enables; a refusal is shown as the server words it. */
const Gate = ({ place, automation, canWrite }: { place: Place; automation: AutomationDetail; canWrite: boolean }) => {
  const client = useQueryClient()
  const change = useMutation({
    mutationFn: (enable: boolean) => invoke<Automation>(place, enable ? "automation.enable" : "automation.disable", { automationId: automation.automationId }),
    onSuccess: (saved) => {
      client.setQueryData<AutomationDetail>(automationKey(place, saved.automationId), (old) => (old === undefined ? old : { ...old, ...saved }))
      void client.invalidateQueries({ queryKey: listKey(place) })
    }
  })
  const waiting = !automation.enabled && automation.origin === "ai"
  return (
    <section className={`card gate ${automation.enabled ? "gate-on" : "gate-off"}`} aria-labelledby="gate-heading">
      <h2 id="gate-heading">{automation.enabled ? "Enabled" : "Disabled"}</h2>
      <p>{automation.enabled ? "Its trigger is live: it runs whenever the trigger fires." : "Nothing runs while it is disabled."}</p>
      {waiting && (
        <p className="warn-note">
          Made by an AI (the assistant, MCP or an API key), so it is {AI_WAITING}. Check its trigger and steps, then enable it if it should run.
        </p>
      )}
      {canWrite && (
        <div className="row">
          <button
            type="button"
            className={automation.enabled ? "danger" : "primary"}
            disabled={change.isPending}
            onClick={() => change.mutate(!automation.enabled)}
          >
            {automation.enabled ? "Disable" : "Enable"}
          </button>
          <span role="status">{change.isSuccess ? (change.data.enabled ? "Enabled by you." : "Disabled.") : ""}</span>
        </div>
      )}
      <ErrorNote error={change.error} title={change.variables === false ? "Not disabled" : "Not enabled"} />
    </section>
  )
}

/** Fires an API-triggered automation with an optional payload; the run started is opened below. */
const RunNow = ({ place, automation, onStarted }: { place: Place; automation: AutomationDetail; onStarted: (runId: string) => void }) => {
  const client = useQueryClient()
  const [payload, setPayload] = useState("")
  const [problem, setProblem] = useState<Error | null>(null)
  const fire = useMutation({
    mutationFn: (body: unknown) =>
      invoke<{ runId: string }>(place, "automation.trigger", { automationId: automation.automationId, ...(body === undefined ? {} : { payload: body }) }),
    onSuccess: ({ runId }) => {
      onStarted(runId)
      void client.invalidateQueries({ queryKey: automationKey(place, automation.automationId) })
    }
  })
  return (
    <section aria-labelledby="run-now-heading">
      <h2 id="run-now-heading">Run now</h2>
      <form
        onSubmit={(event) => {
          event.preventDefault()
          setProblem(null)
          let body: unknown
          try {
            body = payload.trim() === "" ? undefined : JSON.parse(payload)
          } catch (error) {
            setProblem(new Error(`the payload is not JSON: ${(error as Error).message}`))
            return
          }
          fire.mutate(body)
        }}
      >
        <Field label="Payload as JSON" hint="Optional; steps read it as {{trigger.payload…}}.">
          {(id, hint) => <textarea id={id} aria-describedby={hint} className="mono" rows={2} value={payload} onChange={(event) => setPayload(event.target.value)} />}
        </Field>
        <button type="submit" className="primary" disabled={fire.isPending || !automation.enabled}>
          {fire.isPending ? "Starting…" : "Run now"}
        </button>
        {!automation.enabled && <span className="muted"> Enable it first: a disabled automation does not run.</span>}
        <ErrorNote error={problem} title="Not started" />
        <ErrorNote error={fire.error} title="Not started" />
      </form>
    </section>
  )
}

const Delete = ({ place, automation }: { place: Place; automation: Automation }) => {
  const client = useQueryClient()
  const [asking, setAsking] = useState(false)
  const remove = useMutation({
    mutationFn: () => invoke(place, "automation.delete", { automationId: automation.automationId }),
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: listKey(place) })
      navigate(placePath(place, "automations"))
    }
  })
  return (
    <div className="delete">
      {asking ? (
        <div className="row" role="group" aria-label="Confirm deletion">
          <span>Delete “{automation.name}”? Its runs' history stays.</span>
          <button type="button" className="danger" onClick={() => remove.mutate()} disabled={remove.isPending}>
            Yes, delete it
          </button>
          <button type="button" onClick={() => setAsking(false)}>
            Keep it
          </button>
        </div>
      ) : (
        <button type="button" className="danger" onClick={() => setAsking(true)}>
          Delete automation
        </button>
      )}
      <ErrorNote error={remove.error} title="Not deleted" />
    </div>
  )
}
