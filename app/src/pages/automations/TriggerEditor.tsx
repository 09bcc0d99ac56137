/**
 * The trigger part of the editor: an event on a label of the schema registry (with its condition
 * tree), a schedule (five-field cron in an IANA zone, with its next runs previewed by croner, as
 * the server reads it), or the API (nothing to configure; how to fire it is shown).
 */
import { Cron } from "croner"
import { useMemo } from "react"
import type { Place } from "../../api.ts"
import { Field } from "../../ui.tsx"
import { ConditionBuilder } from "./ConditionBuilder.tsx"
import type { Draft } from "./drafts.ts"
import { emptyGroup, EVENT_WORDS, type Label, type NodeEventType } from "./model.ts"

interface TriggerProps {
  readonly draft: Draft
  readonly set: (patch: Partial<Draft>) => void
  readonly labels: ReadonlyArray<Label>
  readonly place: Place
  /** Known once the automation is saved: the API example names it. */
  readonly automationId: string | undefined
}

export const TriggerEditor = ({ draft, set, labels, place, automationId }: TriggerProps) => (
  <fieldset className="trigger">
    <legend>Trigger</legend>
    <div className="row" role="radiogroup" aria-label="Trigger type">
      {(
        [
          ["event", "An event on a node"],
          ["schedule", "A schedule"],
          ["api", "An API call"]
        ] as const
      ).map(([type, words]) => (
        <label key={type} className="choice">
          <input type="radio" name="trigger-type" value={type} checked={draft.triggerType === type} onChange={() => set({ triggerType: type })} /> {words}
        </label>
      ))}
    </div>
    {draft.triggerType === "event" && <EventTrigger draft={draft} set={set} labels={labels} />}
    {draft.triggerType === "schedule" && <ScheduleTrigger draft={draft} set={set} />}
    {draft.triggerType === "api" && <ApiTrigger place={place} automationId={automationId} />}
  </fieldset>
)

const EventTrigger = ({ draft, set, labels }: Pick<TriggerProps, "draft" | "set" | "labels">) => {
  const label = labels.find((l) => l.label === draft.entityType)
  return (
    <>
      {labels.length === 0 && (
        <p className="warn-note">
          This workspace's schema defines no labels yet, so there is no event to watch. Labels are defined with schema.define_label (API, MCP or the
          assistant).
        </p>
      )}
      <div className="row wrap-fields">
        <Field label="Entity type">
          {(id) => (
            <select
              id={id}
              value={draft.entityType}
              // conditions name the old label's properties: start the tree afresh
              onChange={(event) => set({ entityType: event.target.value, conditions: emptyGroup() })}
            >
              <option value="">Choose a label</option>
              {labels.map((l) => (
                <option key={l.label} value={l.label}>
                  {l.label}
                </option>
              ))}
              {draft.entityType !== "" && label === undefined && <option value={draft.entityType}>{draft.entityType} (no longer defined)</option>}
            </select>
          )}
        </Field>
        <Field label="Event">
          {(id) => (
            <select id={id} value={draft.eventType} onChange={(event) => set({ eventType: event.target.value as NodeEventType })}>
              {Object.entries(EVENT_WORDS).map(([type, words]) => (
                <option key={type} value={type}>
                  {words} ({type})
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      {label !== undefined && <ConditionBuilder root={draft.conditions} onChange={(conditions) => set({ conditions })} label={label} scope="" />}
    </>
  )
}

/** Every IANA zone the browser knows, `UTC` first. */
const ZONES: ReadonlyArray<string> = ["UTC", ...Intl.supportedValuesOf("timeZone").filter((zone) => zone !== "UTC")]

type Preview = { readonly runs: ReadonlyArray<Date> } | { readonly problem: string }

/** The next five runs as the server's scheduler finds them (croner, five fields, in the zone). */
const previewOf = (expression: string, timezone: string): Preview => {
  if (expression.trim() === "") return { problem: "Write a cron expression: five fields, minute hour day-of-month month day-of-week." }
  try {
    const runs = new Cron(expression.trim(), { paused: true, mode: "5-part", timezone }).nextRuns(5)
    return runs.length === 0 ? { problem: `'${expression}' never fires.` } : { runs }
  } catch (error) {
    return { problem: `'${expression}' is not a five-field cron expression: ${(error as Error).message}` }
  }
}

const ScheduleTrigger = ({ draft, set }: Pick<TriggerProps, "draft" | "set">) => {
  const preview = useMemo(() => previewOf(draft.cronExpression, draft.timezone), [draft.cronExpression, draft.timezone])
  const inZone = new Intl.DateTimeFormat(undefined, { timeZone: draft.timezone, dateStyle: "medium", timeStyle: "short" })
  const local = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" })
  const zones = ZONES.includes(draft.timezone) ? ZONES : [draft.timezone, ...ZONES]
  return (
    <>
      <div className="row wrap-fields">
        <Field label="Cron expression" hint="Five fields: minute, hour, day of month, month, day of week. 0 9 * * 1-5 is 09:00 on weekdays.">
          {(id, hint) => (
            <input
              id={id}
              aria-describedby={hint}
              className="mono"
              spellCheck={false}
              autoComplete="off"
              value={draft.cronExpression}
              onChange={(event) => set({ cronExpression: event.target.value })}
            />
          )}
        </Field>
        <Field label="Time zone">
          {(id) => (
            <select id={id} value={draft.timezone} onChange={(event) => set({ timezone: event.target.value })}>
              {zones.map((zone) => (
                <option key={zone} value={zone}>
                  {zone}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <section className="preview" aria-labelledby="next-runs" aria-live="polite">
        <h3 id="next-runs">Next runs</h3>
        {"problem" in preview ? (
          <p className="error-note">{preview.problem}</p>
        ) : (
          <ol>
            {preview.runs.map((at) => (
              <li key={at.toISOString()}>
                <time dateTime={at.toISOString()}>{inZone.format(at)}</time> in {draft.timezone}{" "}
                <span className="muted">({local.format(at)} your time)</span>
              </li>
            ))}
          </ol>
        )}
      </section>
    </>
  )
}

const ApiTrigger = ({ place, automationId }: { place: Place; automationId: string | undefined }) => (
  <div className="api-trigger">
    <p>
      Nothing to configure: the automation runs when it is fired with <code>automation.trigger</code> (on the API, over MCP, or by the assistant with your
      approval), with an optional JSON payload that steps read as <code>{"{{trigger.payload}}"}</code>. Once enabled, the Run now button on its page fires
      it too.
    </p>
    <pre>
      {`POST /v1/${place.org}/${place.ws}/automation/trigger
{"automationId": "${automationId ?? "aut_…"}", "payload": {"any": "JSON"}}`}
    </pre>
  </div>
)
