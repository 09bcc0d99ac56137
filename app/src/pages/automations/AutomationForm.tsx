/**
 * The editor of an automation, new or existing: name, description, trigger and steps, saved with
 * `automation.create` or `automation.update`; what the server refuses is shown in its words beside
 * the Save button.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import { invoke, type Place } from "../../api.ts"
import { ErrorNote, Field, Loading } from "../../ui.tsx"
import { type Draft, draftOf, emptyDraft, toRequest } from "./drafts.ts"
import { type Automation, DraftProblem, type Label } from "./model.ts"
import { StepsEditor } from "./StepsEditor.tsx"
import { TriggerEditor } from "./TriggerEditor.tsx"

const labelsKey = (place: Place) => ["schema", place.org, place.ws] as const
export const listKey = (place: Place) => ["automations", place.org, place.ws] as const

interface FormProps {
  readonly place: Place
  /** Undefined for a new automation. */
  readonly automation: Automation | undefined
  readonly onSaved: (automation: Automation) => void
}

/** Waits for the schema registry's labels: a saved condition's value is shown by its property's type. */
export const AutomationForm = (props: FormProps) => {
  const labels = useQuery({
    queryKey: labelsKey(props.place),
    queryFn: () => invoke<{ labels: ReadonlyArray<Label> }>(props.place, "schema.get", {}).then((r) => r.labels)
  })
  if (labels.isPending) return <Loading what="the workspace's schema" />
  return (
    <>
      <ErrorNote error={labels.error} title="The workspace's schema could not be loaded, so no event trigger can be edited" />
      <Editor {...props} labels={labels.data ?? []} />
    </>
  )
}

const Editor = ({ place, automation, onSaved, labels }: FormProps & { labels: ReadonlyArray<Label> }) => {
  const client = useQueryClient()
  const [draft, setDraft] = useState<Draft>(() => (automation === undefined ? emptyDraft() : draftOf(automation, labels)))
  const [enableNow, setEnableNow] = useState(false)
  const [problem, setProblem] = useState<DraftProblem | null>(null)
  const set = (patch: Partial<Draft>) => setDraft((current) => ({ ...current, ...patch }))

  const save = useMutation({
    mutationFn: (request: ReturnType<typeof toRequest>) =>
      automation === undefined
        ? invoke<Automation>(place, "automation.create", { ...request, ...(enableNow ? { enabled: true } : {}) })
        : invoke<Automation>(place, "automation.update", { automationId: automation.automationId, ...request }),
    onSuccess: (saved) => {
      void client.invalidateQueries({ queryKey: listKey(place) })
      void client.invalidateQueries({ queryKey: ["automation", place.org, place.ws, saved.automationId] })
      onSaved(saved)
    }
  })

  const submit = (event: FormEvent) => {
    event.preventDefault()
    save.reset()
    try {
      const request = toRequest(draft, labels)
      setProblem(null)
      save.mutate(request)
    } catch (error) {
      if (!(error instanceof DraftProblem)) throw error
      setProblem(error)
    }
  }

  return (
    <form className="automation-form" onSubmit={submit} aria-label={automation === undefined ? "New automation" : "Automation settings"}>
      <Field label="Name">
        {(id) => <input id={id} required maxLength={200} value={draft.name} onChange={(event) => set({ name: event.target.value })} />}
      </Field>
      <Field label="Description">
        {(id) => <textarea id={id} rows={2} maxLength={2000} value={draft.description} onChange={(event) => set({ description: event.target.value })} />}
      </Field>
      <TriggerEditor draft={draft} set={set} labels={labels} place={place} automationId={automation?.automationId} />
      <StepsEditor steps={draft.steps} onChange={(steps) => set({ steps })} place={place} />
      {automation === undefined && (
        <label className="choice">
          <input type="checkbox" checked={enableNow} onChange={(event) => setEnableNow(event.target.checked)} /> Enable it as soon as it is saved
        </label>
      )}
      <div className="row form-end">
        <button type="submit" className="primary" disabled={save.isPending}>
          {save.isPending ? "Saving…" : automation === undefined ? "Create automation" : "Save changes"}
        </button>
        <span role="status" className={save.isSuccess && automation !== undefined ? "ok-note" : undefined}>
          {save.isSuccess && automation !== undefined ? "Saved." : ""}
        </span>
      </div>
      <ErrorNote error={problem} title="Not saved" />
      <ErrorNote error={save.error} title="Not saved" />
    </form>
  )
}
