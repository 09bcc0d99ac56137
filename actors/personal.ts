/**
 * Personal fields (docs/audit.md, "Erasure by crypto-shredding"): per event type, the places of its
 * payload that hold a person's words. The shell seals each under that person's data key before the
 * command that causes the event is sent, so the log, the read models and exports hold only the
 * sealed form; erasing the person destroys the key. A place is a dotted path; `[]` steps into each
 * element of an array, `*` into each member of an object; `a|b` is `a` where it leads, else `b` (a
 * field whose shape differs by case). Events not listed carry nothing sealed (docs/audit.md lists
 * what is not yet). A text is sealed as it is; any other JSON as its text.
 */
import type { Json } from "./kernel.ts"

export const personalFields: Readonly<Record<string, ReadonlyArray<string>>> = {
  /** The person's message, and the assistant's reply to them. */
  "message.saved": ["content"],
  /** The reply again, alone and inside the turn result; what an approval run's call answered (sealed whole). */
  "run.finished": ["reply", "result.reply", "result.output"],
  /** Each chat event the turn streamed (text deltas, the final result): sealed whole, as JSON text. */
  "run.streamed": ["events[].event"],
  /** The turn's tape holds what the model was sent and answered, and the tools' results: sealed whole, as JSON text. */
  "run.taped": ["tape"],
  /** The summary is written from the messages. */
  "summary.rewritten": ["summary"],
  /** A call the turn parked for approval: its input (sealed whole) and its preview, written from the person's words; repeated in the decision. */
  "tool_call.parked": ["input", "inputPreview"],
  /** The approver's note is theirs: sealed under the approver's key (docs/decisions.md). */
  "approval.resolved": ["parked.input", "parked.inputPreview", "note"],
  /** The question the turn asked the person (its options too: the answer is often one of them), and the person's answer; repeated when it is answered or closed. */
  "question.asked": ["question", "options[]"],
  "question.answered": ["answer", "asked.question", "asked.options[]"],
  "question.closed": ["asked.question", "asked.options[]"],
  /** An A2A task's messages and its response, part by part: a text part's text, a data part's members. */
  "a2a.task.submitted": ["message.parts[].text", "message.parts[].data.*"],
  "a2a.task.message_received": ["message.parts[].text", "message.parts[].data.*"],
  "a2a.task.input_required": ["agentMessage.parts[].text"],
  "a2a.task.completed": ["agentMessage.parts[].text", "artifact.parts[].text"],
  /** Why the task's turn failed or could not start: a provider's or tool's message may quote the person's words. */
  "a2a.task.failed": ["error.message"],
  "a2a.task.rejected": ["reason"],
  /**
   * An automation run's API payload (the caller's), each step's output (sealed whole; a `human_input`
   * step's output is `{response, respondent}` with the answer sealed), what a step renders from the
   * payload and earlier outputs (the question a `human_input` step asks, the input of a call parked
   * for approval) and a person's answer (theirs).
   */
  "automation_run.started": ["trigger.payload"],
  "automation_run.step_succeeded": ["output.response|output"],
  "automation_run.input_requested": ["prompt"],
  "automation_run.approval_requested": ["input"],
  "automation_run.input_received": ["response"],
  /**
   * A step's failure (repeated as the run's) may quote a rendered input: the driver seals its message
   * whole. A denial's, which the decider writes, quotes the approver's note, sealed (under the
   * approver's key) among its own words.
   */
  "automation_run.approval_resolved": ["note"],
  "automation_run.step_failed": ["error.message"],
  "automation_run.failed": ["error.message"]
}

/** The values at `path` in `value` (none where the path does not lead). */
export const valuesAt = (value: Json | undefined, path: string): ReadonlyArray<Json> => {
  if (value === undefined) return []
  if (path.includes("|")) {
    const found = path.split("|").map((alternative) => valuesAt(value, alternative)).find((values) => values.length > 0)
    return found ?? []
  }
  if (path === "") return [value]
  const [step, ...rest] = path.split(".")
  const next = rest.join(".")
  const each = step.endsWith("[]")
  const name = each ? step.slice(0, -2) : step
  if (value === null || typeof value !== "object" || Array.isArray(value)) return []
  if (step === "*") return Object.values(value).flatMap((member) => valuesAt(member, next))
  const member = (value as { readonly [k: string]: Json })[name]
  if (!each) return valuesAt(member, next)
  return Array.isArray(member) ? member.flatMap((element: Json) => valuesAt(element, next)) : []
}

/** The personal values of an event of type `type` with `payload`, as the log holds them. */
export const personalValues = (type: string, payload: Json): ReadonlyArray<Json> =>
  (personalFields[type] ?? []).flatMap((path) => valuesAt(payload, path))
