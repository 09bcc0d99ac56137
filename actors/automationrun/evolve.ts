import type { AutomationRunEvent } from "./events.ts"
import type { AutomationRunState, Run, StepRecord } from "./state.ts"

/** The run with its latest attempt at `index` changed. */
const updateAttempt = (run: Run, index: number, change: (record: StepRecord) => StepRecord): Run => {
  const at = run.timeline.findLastIndex((r) => r.index === index)
  return at === -1 ? run : { ...run, timeline: run.timeline.map((r, i) => (i === at ? change(r) : r)) }
}

export const evolve = (state: AutomationRunState, event: AutomationRunEvent): AutomationRunState => {
  if (event._tag === "automation_run.started") {
    const { _tag, at, ...fields } = event
    return { _tag: "Run", ...fields, status: "running", cursor: fields.steps.length === 0 ? null : 0, timeline: [], startedAt: at, endedAt: null, error: null }
  }
  if (state._tag !== "Run") return state
  switch (event._tag) {
    case "automation_run.step_started":
      return {
        ...state,
        timeline: [
          // an attempt left open (its node stopped mid-step) ends where the next one begins
          ...state.timeline.map((r) =>
            r.index === event.index && (r.status === "running" || r.status === "waiting")
              ? { ...r, status: "failed" as const, endedAt: event.at, error: { code: "attempt_interrupted", message: "its node stopped; the next attempt took over" } }
              : r
          ),
          { index: event.index, name: event.name, stepType: event.stepType, status: "running", attempt: event.attempt, startedAt: event.at, endedAt: null, output: null, error: null, input: null }
        ]
      }
    case "automation_run.step_succeeded":
      return {
        ...updateAttempt(state, event.index, (r) => ({ ...r, status: "succeeded", endedAt: event.at, output: event.output })),
        status: "running",
        cursor: event.next
      }
    case "automation_run.step_failed":
      // a failed wait leaves the run waiting no more: another attempt may begin; after a final
      // failure none does (the run's end follows in the same append, but a driver may hear this first)
      return {
        ...updateAttempt(state, event.index, (r) => ({ ...r, status: "failed", endedAt: event.at, error: event.error })),
        status: "running",
        cursor: event.final ? null : state.cursor
      }
    case "automation_run.input_requested":
      return {
        ...updateAttempt(state, event.index, (r) => ({ ...r, status: "waiting", input: { prompt: event.prompt, assignee: event.assignee, expiresAt: event.expiresAt, requestedAt: event.at } })),
        status: "waiting"
      }
    case "automation_run.input_received":
      return state
    case "automation_run.approval_requested": {
      const { capability, input, approver, expiresAt } = event
      return {
        ...updateAttempt(state, event.index, (r) => ({
          ...r,
          status: "waiting",
          approval: { capability, input, approver, expiresAt, requestedAt: event.at, decision: null, note: null, resolvedAt: null }
        })),
        status: "waiting"
      }
    }
    case "automation_run.approval_resolved": {
      // approved, the attempt runs again to make the call; denied, its failure follows
      const approved = event.decision === "approved"
      return {
        ...updateAttempt(state, event.index, (r) => ({
          ...r,
          status: approved ? "running" : r.status,
          approval: r.approval === undefined
            ? undefined
            : { ...r.approval, decision: event.decision, note: event.note, resolvedAt: event.at, ...(event.receipt === null ? {} : { receipt: event.receipt }) }
        })),
        status: approved ? "running" : state.status
      }
    }
    case "automation_run.succeeded":
      return { ...state, status: "succeeded", cursor: null, endedAt: event.at }
    case "automation_run.failed":
      return { ...state, status: "failed", cursor: null, endedAt: event.at, error: { ...event.error, step: state.steps[event.index]?.name ?? String(event.index) } }
  }
}
