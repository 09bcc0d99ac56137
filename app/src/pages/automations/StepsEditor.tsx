/**
 * The playbook's steps: each step's name, type and the type's settings; add, remove and move up or
 * down with buttons (focus follows the step moved). Agents come from `agent.list`; a tool step's
 * capability is suggested from what the workspace assistant may call (a playbook may call the same);
 * a human_input step's assignee is chosen among the people of `workspace.members.list`.
 */
import { type UseQueryResult, useQuery } from "@tanstack/react-query"
import { useEffect, useState } from "react"
import { invoke, type Place } from "../../api.ts"
import { useAccount } from "../../session.tsx"
import { ErrorNote, Field } from "../../ui.tsx"
import { ConditionBuilder } from "./ConditionBuilder.tsx"
import { newKey, newStep, type StepDraft } from "./drafts.ts"
import { STEP_TYPES, STEP_WORDS, type StepType } from "./model.ts"

interface Agent {
  readonly slug: string
  readonly name: string
  readonly builtIn: boolean
  readonly tools: ReadonlyArray<string>
}

const useAgents = (place: Place) =>
  useQuery({
    queryKey: ["agents", place.org, place.ws],
    queryFn: () => invoke<{ agents: ReadonlyArray<Agent> }>(place, "agent.list"),
    staleTime: 60_000
  })

interface Member {
  readonly userId: string
  readonly name: string
  readonly email: string
}

type Members = UseQueryResult<{ members: ReadonlyArray<Member> }>

export const useMembers = (place: Place): Members =>
  useQuery({
    queryKey: ["workspace-members", place.org, place.ws],
    queryFn: () => invoke<{ members: ReadonlyArray<Member> }>(place, "workspace.members.list"),
    staleTime: 60_000
  })

interface StepsProps {
  readonly steps: ReadonlyArray<StepDraft>
  readonly onChange: (steps: ReadonlyArray<StepDraft>) => void
  readonly place: Place
}

export const StepsEditor = ({ steps, onChange, place }: StepsProps) => {
  const agents = useAgents(place)
  const members = useMembers(place)
  const [newType, setNewType] = useState<StepType>("tool")
  // the control to focus once the steps re-render (after a move or a removal)
  const [focusNext, setFocusNext] = useState<string | null>(null)
  useEffect(() => {
    if (focusNext === null) return
    document.getElementById(focusNext)?.focus()
    setFocusNext(null)
  }, [focusNext, steps])

  const update = (key: number, patch: Partial<StepDraft>) => onChange(steps.map((s) => (s.key === key ? { ...s, ...patch } : s)))
  const move = (index: number, by: -1 | 1) => {
    const to = index + by
    const next = [...steps]
    ;[next[index], next[to]] = [next[to], next[index]]
    onChange(next)
    const moved = next[to]
    const edge = by === -1 ? to === 0 : to === next.length - 1
    setFocusNext(`step-${moved.key}-${edge ? (by === -1 ? "down" : "up") : by === -1 ? "up" : "down"}`)
  }
  const remove = (index: number) => {
    onChange(steps.filter((_, i) => i !== index))
    setFocusNext("new-step-type")
  }
  const add = () => {
    const taken = new Set(steps.map((s) => s.name))
    let n = steps.length + 1
    while (taken.has(`step ${n}`)) n++
    const step = newStep(newType, `step ${n}`)
    onChange([...steps, step])
    setFocusNext(`step-${step.key}-name`)
  }

  return (
    <fieldset className="steps">
      <legend>Steps</legend>
      <ErrorNote error={agents.error} title="The workspace's agents could not be loaded" />
      {steps.length === 0 && <p className="muted">No steps yet: a blank playbook runs and succeeds at once. Add steps below.</p>}
      <ol className="step-list">
        {steps.map((step, index) => (
          <li key={step.key} className="card step">
            <div className="step-head">
              <h3>
                Step {index + 1}: {STEP_WORDS[step.stepType]}
              </h3>
              <div className="row">
                <button type="button" id={`step-${step.key}-up`} disabled={index === 0} onClick={() => move(index, -1)} aria-label={`Move step ${index + 1} up`}>
                  ↑ Up
                </button>
                <button
                  type="button"
                  id={`step-${step.key}-down`}
                  disabled={index === steps.length - 1}
                  onClick={() => move(index, 1)}
                  aria-label={`Move step ${index + 1} down`}
                >
                  ↓ Down
                </button>
                <button type="button" className="danger" onClick={() => remove(index)} aria-label={`Remove step ${index + 1}`}>
                  Remove
                </button>
              </div>
            </div>
            <div className="field">
              <label htmlFor={`step-${step.key}-name`}>Name (step {index + 1})</label>
              <input id={`step-${step.key}-name`} value={step.name} onChange={(event) => update(step.key, { name: event.target.value })} />
            </div>
            <StepSettings step={step} index={index} steps={steps} update={(patch) => update(step.key, patch)} agents={agents.data?.agents ?? []} members={members} />
          </li>
        ))}
      </ol>
      <div className="row">
        <label htmlFor="new-step-type">New step's type</label>
        <select id="new-step-type" value={newType} onChange={(event) => setNewType(event.target.value as StepType)}>
          {STEP_TYPES.map((type) => (
            <option key={type} value={type}>
              {STEP_WORDS[type]}
            </option>
          ))}
        </select>
        <button type="button" onClick={add}>
          Add step
        </button>
      </div>
    </fieldset>
  )
}

interface SettingsProps {
  readonly step: StepDraft
  readonly index: number
  readonly steps: ReadonlyArray<StepDraft>
  readonly update: (patch: Partial<StepDraft>) => void
  readonly agents: ReadonlyArray<Agent>
  readonly members: Members
}

const StepSettings = ({ step, index, steps, update, agents, members }: SettingsProps) => {
  const account = useAccount()
  const n = index + 1
  const f = step.fields
  const field = (key: string) => (value: string) => update({ fields: { ...f, [key]: value } })
  const text = (label: string, key: string, options: { hint?: string; rows?: number; mono?: boolean; placeholder?: string } = {}) => (
    <Field label={`${label} (step ${n})`} hint={options.hint}>
      {(id, hint) =>
        options.rows === undefined ? (
          <input id={id} aria-describedby={hint} placeholder={options.placeholder} className={options.mono ? "mono" : undefined} value={f[key] ?? ""} onChange={(event) => field(key)(event.target.value)} />
        ) : (
          <textarea id={id} aria-describedby={hint} rows={options.rows} placeholder={options.placeholder} className={options.mono ? "mono" : undefined} value={f[key] ?? ""} onChange={(event) => field(key)(event.target.value)} />
        )
      }
    </Field>
  )
  switch (step.stepType) {
    case "agent":
      return (
        <>
          <Field label={`Agent (step ${n})`}>
            {(id) => (
              <select id={id} value={f.agentSlug ?? ""} onChange={(event) => field("agentSlug")(event.target.value)}>
                <option value="">Choose an agent</option>
                {agents.map((agent) => (
                  <option key={agent.slug} value={agent.slug}>
                    {agent.name} ({agent.slug})
                  </option>
                ))}
                {f.agentSlug && !agents.some((a) => a.slug === f.agentSlug) && <option value={f.agentSlug}>{f.agentSlug}</option>}
              </select>
            )}
          </Field>
          {text("What to ask the agent", "prompt", { rows: 3, hint: "Optional. {{trigger.…}} and {{steps.<name>.output.…}} are filled in when it runs." })}
        </>
      )
    case "tool": {
      const tools = agents.find((a) => a.builtIn)?.tools ?? []
      return (
        <>
          <Field label={`Capability (step ${n})`} hint="A capability name, such as node.create or system.ping.">
            {(id, hint) => (
              <>
                <input id={id} aria-describedby={hint} className="mono" list={`tools-${step.key}`} value={f.capability ?? ""} onChange={(event) => field("capability")(event.target.value)} />
                <datalist id={`tools-${step.key}`}>
                  {tools.map((tool) => (
                    <option key={tool} value={tool} />
                  ))}
                </datalist>
              </>
            )}
          </Field>
          {text("Input as JSON", "input", { rows: 4, mono: true, placeholder: '{"nodeId": "{{trigger.nodeId}}"}', hint: "Optional: a JSON object. A string that is only a {{placeholder}} takes the value's own type." })}
        </>
      )
    }
    case "condition": {
      const later = steps.slice(index + 1).map((s) => s.name)
      return (
        <>
          <p className="muted">
            When these hold, the run goes on with the next step. Paths start with <code>trigger</code> (what fired the run) or <code>steps</code> (e.g.{" "}
            <code>steps.review.output.approved</code>).
          </p>
          <ConditionBuilder root={step.conditions} onChange={(conditions) => update({ conditions })} label={undefined} scope={` in step ${n}`} />
          <Field label={`Otherwise (step ${n})`}>
            {(id) => (
              <select id={id} value={f.else ?? ""} onChange={(event) => field("else")(event.target.value)}>
                <option value="">End the run</option>
                {later.map((name) => (
                  <option key={name} value={name}>
                    Go to step '{name}'
                  </option>
                ))}
                {f.else && !later.includes(f.else) && <option value={f.else}>Go to '{f.else}' (not a later step)</option>}
              </select>
            )}
          </Field>
        </>
      )
    }
    case "webhook":
      return (
        <>
          {text("URL", "url", { placeholder: "https://example.com/hook", mono: true })}
          <Field label={`Method (step ${n})`}>
            {(id) => (
              <select id={id} value={f.method ?? "POST"} onChange={(event) => field("method")(event.target.value)}>
                <option>POST</option>
                <option>PUT</option>
                <option>PATCH</option>
              </select>
            )}
          </Field>
          <fieldset className="headers">
            <legend>Headers (step {n})</legend>
            {step.headers.map((header, h) => (
              <div key={header.key} className="row">
                <input
                  aria-label={`Header ${h + 1} name (step ${n})`}
                  placeholder="X-Header"
                  value={header.name}
                  onChange={(event) => update({ headers: step.headers.map((x) => (x.key === header.key ? { ...x, name: event.target.value } : x)) })}
                />
                <input
                  aria-label={`Header ${h + 1} value (step ${n})`}
                  value={header.value}
                  onChange={(event) => update({ headers: step.headers.map((x) => (x.key === header.key ? { ...x, value: event.target.value } : x)) })}
                />
                <button type="button" className="danger" aria-label={`Remove header ${h + 1} (step ${n})`} onClick={() => update({ headers: step.headers.filter((x) => x.key !== header.key) })}>
                  Remove
                </button>
              </div>
            ))}
            <button type="button" onClick={() => update({ headers: [...step.headers, { key: newKey(), name: "", value: "" }] })} aria-label={`Add header (step ${n})`}>
              Add header
            </button>
          </fieldset>
          {text("Body as JSON", "body", { rows: 3, mono: true, hint: "Optional. Deliveries are signed with the automation's webhook secret (Standard Webhooks)." })}
        </>
      )
    case "prompt":
      return text("Prompt", "prompt", { rows: 4, hint: "One turn of the workspace assistant. {{trigger.…}} and {{steps.<name>.output.…}} are filled in." })
    case "human_input":
      return (
        <>
          {text("Question", "prompt", { rows: 2 })}
          {members.isError && <ErrorNote error={members.error} title="Type the assignee's user id; the workspace's people could not be loaded" />}
          <div className="row wrap-fields">
            {members.isError ? (
              <>
                <Field label={`Assignee (step ${n})`} hint="A person's user id (usr_…); empty asks the automation's owner.">
                  {(id, hint) => <input id={id} aria-describedby={hint} className="mono" value={f.assignee ?? ""} onChange={(event) => field("assignee")(event.target.value)} />}
                </Field>
                {account.data && (
                  <button type="button" onClick={() => field("assignee")(account.data!.userId)} aria-label={`Assign step ${n} to me`}>
                    Me
                  </button>
                )}
              </>
            ) : (
              <Field label={`Assignee (step ${n})`}>
                {(id) => {
                  const me = account.data?.userId
                  const people = members.data?.members ?? []
                  const known = f.assignee === undefined || f.assignee === "" || f.assignee === me || people.some((p) => p.userId === f.assignee)
                  return (
                    <select id={id} value={f.assignee ?? ""} onChange={(event) => field("assignee")(event.target.value)}>
                      {account.data && (
                        <option value={account.data.userId}>
                          Me ({account.data.name}, {account.data.email})
                        </option>
                      )}
                      {people
                        .filter((p) => p.userId !== me)
                        .map((p) => (
                          <option key={p.userId} value={p.userId}>
                            {p.name} ({p.email})
                          </option>
                        ))}
                      {!known && <option value={f.assignee}>{f.assignee} (not a person of this workspace)</option>}
                      <option value="">The automation's owner</option>
                    </select>
                  )
                }}
              </Field>
            )}
            <Field label={`Time to answer in hours (step ${n})`} hint="Empty: 24 hours; at most 720.">
              {(id, hint) => <input id={id} aria-describedby={hint} type="number" min="0" step="any" value={f.timeoutHours ?? ""} onChange={(event) => field("timeoutHours")(event.target.value)} />}
            </Field>
          </div>
        </>
      )
  }
}
