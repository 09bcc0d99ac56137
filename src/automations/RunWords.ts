/**
 * A run's personal words (actors/personal.ts, docs/audit.md "Erasure by crypto-shredding"): an API
 * trigger's payload, each step's output, the question a `human_input` step asks, the input of a
 * call parked for approval and a step's failure message go to the log sealed under the key of the
 * person the run acts for, a person's answer to a `human_input` step under the answerer's, an
 * approver's note (which a denial's failure quotes) under the approver's. The driver opens them to fill the
 * next steps' placeholders and run an approved call; the reads open them to answer, an erased
 * output, payload or input as `null` (a question as "") with `erased: true` beside it.
 */
import { Effect } from "effect"
import type { RunTrigger } from "../../actors/automation/definition.ts"
import type { StepRecord } from "../../actors/automationrun/state.ts"
import type { Json } from "../../actors/kernel.ts"
import { type PersonalOpener, type PersonSealer, personalOpener, sealedWithin } from "../audit/PersonalData.ts"
import type { Run as RunView } from "./Api.ts"

/** The trigger as the run's start records it: an API call's payload sealed. */
export const sealedTrigger = (sealer: PersonSealer, trigger: RunTrigger): RunTrigger =>
  trigger.type === "api" ? { ...trigger, payload: sealer.sealJson(trigger.payload) } : trigger

/** The strings in a JSON value, at any depth: a `human_input` step's output holds its sealed answer as a member. */
const stringsIn = (value: Json): ReadonlyArray<string> =>
  typeof value === "string" ? [value] : value === null || typeof value !== "object" ? [] : Object.values(value).flatMap(stringsIn)

/** The sealed words a step's failure message holds: the driver's sealed whole, a denial's the approver's note it quotes. */
const failureWords = (error: { readonly message: string } | null): ReadonlyArray<string> => (error === null ? [] : sealedWithin(error.message))

/** A failure with its message opened; an erased one reads "" (a denial, its words without the note). */
const openedFailure = <E extends { readonly message: string }>(open: PersonalOpener, error: E): E => ({ ...error, message: open.within(error.message) })

/** A run's trigger, timeline and failure with their sealed words opened; `erased` says which were erased. */
const openWords = (trigger: RunTrigger, timeline: ReadonlyArray<StepRecord>, failure: { readonly message: string } | null = null) =>
  Effect.map(personalOpener([
    ...[trigger.type === "api" ? trigger.payload : null, ...timeline.flatMap((record) => [record.output, record.input?.prompt ?? null, record.approval?.input ?? null, record.approval?.note ?? null])].flatMap(stringsIn),
    ...timeline.flatMap((record) => failureWords(record.error)),
    ...failureWords(failure)
  ]), (open) => {
    let erased = false
    const openIn = (value: Json): Json => {
      if (typeof value === "string") {
        const plain = open.json(value) as Json
        if (plain === null) erased = true
        return plain
      }
      if (value === null || typeof value !== "object") return value
      return Array.isArray(value) ? value.map(openIn) : Object.fromEntries(Object.entries(value).map(([name, member]) => [name, openIn(member)]))
    }
    const opened = (value: Json) => {
      erased = false
      const plain = openIn(value)
      return { value: plain, erased }
    }
    const payload = trigger.type === "api" ? opened(trigger.payload) : undefined
    return {
      trigger: payload === undefined ? { trigger, erased: false } : { trigger: { ...trigger, payload: payload.value } as RunTrigger, erased: payload.erased },
      timeline: timeline.map((record) => {
        const output = opened(record.output)
        // the question a `human_input` step asks: an erased one reads ""
        const prompt = record.input === null ? undefined : open.text(record.input.prompt)
        // the input of a call parked for approval: an erased one reads null
        const approval = record.approval === undefined ? undefined : opened(record.approval.input)
        // the approver's note, if any: an erased one reads ""
        const sealedNote = record.approval?.note ?? null
        const note = sealedNote === null ? null : open.text(sealedNote)
        const noteErased = sealedNote !== null && note === null
        const error = record.error === null ? null : openedFailure(open, record.error)
        const errorErased = failureWords(record.error).some((sealed) => open.text(sealed) === null)
        return {
          record: {
            ...record,
            output: output.value,
            input: record.input === null ? null : { ...record.input, prompt: prompt ?? "" },
            ...(record.approval === undefined || approval === undefined ? {} : { approval: { ...record.approval, input: approval.value, note: noteErased ? "" : note } }),
            error
          },
          erased: output.erased || prompt === null || approval?.erased === true || noteErased || errorErased
        }
      }),
      failure: failure === null ? null : openedFailure(open, failure)
    }
  })

/** The run with its words opened, as the driver fills placeholders from it (an erased word is null). */
export const openedRun = <R extends { readonly trigger: RunTrigger; readonly timeline: ReadonlyArray<StepRecord> }>(run: R) =>
  Effect.map(openWords(run.trigger, run.timeline), (words): R => ({ ...run, trigger: words.trigger.trigger, timeline: words.timeline.map((t) => t.record) }))

/** A run as a read answers it: its words opened, each erased one `null` with `erased: true` beside it
 * (an erased failure message or note, ""). */
export const runView = <R extends RunView>(run: R) =>
  Effect.map(openWords(run.trigger as unknown as RunTrigger, run.steps as unknown as ReadonlyArray<StepRecord>, run.error as { readonly message: string } | null), (words): R => ({
    ...run,
    trigger: { ...words.trigger.trigger, ...(words.trigger.erased ? { erased: true } : {}) } as unknown as Json,
    steps: words.timeline.map(({ record, erased }) => ({ ...record, ...(erased ? { erased: true } : {}) })) as unknown as Json,
    error: words.failure as unknown as Json
  }))
