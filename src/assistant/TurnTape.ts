/**
 * The turn's tape (docs/audit.md, "The turn's tape"): what a turn used that its code does not
 * determine, recorded as it runs and written with its end (`run.taped`), so that the turn is a
 * function of its tape and the code (`svc turn replay`, src/assistant/TurnReplay.ts):
 *
 * - the settings in force (model, tier, effort, goal, agent and its skills, the tools offered);
 * - what the model was sent on the first round (the system prompt and the messages);
 * - each model call's output, as the provider streamed it (or, for the goal's check, its result);
 * - each tool call's result, as its tool answered it;
 * - the clock readings the stream took.
 *
 * The model and the tools are taped where the turn hands them to the `ai` SDK: the recording side
 * wraps them, the replaying side stands in for them and answers from the tape alone.
 */
import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3StreamPart } from "@ai-sdk/provider"
import { dynamicTool, jsonSchema, type ModelMessage, type ToolSet, wrapLanguageModel } from "ai"
import type { Json } from "../../actors/kernel.ts"
import { canonicalJson } from "../../streams/Chain.ts"
import { toolNameOfCall, TurnAborted, TurnFailed, type TurnToolCalls } from "./AgentTools.ts"
import type { TurnFailure } from "./ChatEvents.ts"
import type { Goal } from "./Goal.ts"

export const TAPE_VERSION = 1

export interface TapeSettings {
  readonly model: string
  readonly tier: string | null
  readonly effort: string | null
  readonly goal: Goal | null
  readonly agent: string | null
  readonly skills: ReadonlyArray<{ readonly slug: string; readonly version: number }>
  /** The tools offered: the name the model knows each by, and the capability it stands for. */
  readonly tools: ReadonlyArray<{ readonly toolName: string; readonly capability: string }>
}

/** One call of the model: its stream's parts, or (the goal's check) its whole result. */
export type TapedModelCall = { readonly kind: "stream"; readonly parts: ReadonlyArray<Json> } | { readonly kind: "generate"; readonly result: Json }

/** How a tool call ended: its output, an error the model was told, or the turn's end. */
export type TapedOutcome =
  | { readonly output: Json }
  | { readonly error: string }
  | { readonly turnFailed: TurnFailure }
  | { readonly aborted: true }

export interface TapedToolCall {
  readonly toolCallId: string
  readonly toolName: string
  readonly input: Json
  readonly outcome: TapedOutcome
}

export interface TurnTape {
  readonly version: typeof TAPE_VERSION
  readonly settings: TapeSettings
  readonly input: { readonly system: string; readonly messages: Json }
  readonly modelCalls: ReadonlyArray<TapedModelCall>
  readonly toolCalls: ReadonlyArray<TapedToolCall>
  readonly clock: ReadonlyArray<number>
}

/**
 * A value as the tape holds it: JSON, with the SDK's few non-JSON values marked (`$date`, `$bytes`,
 * `$error`) so that `fromTape` gives them back. Undefined members are dropped, as JSON drops them.
 */
export const toTape = (value: unknown): Json =>
  JSON.parse(
    JSON.stringify(value, function (this: any, key: string, v: unknown) {
      const raw = this[key]
      if (raw instanceof Date) return { $date: raw.toISOString() }
      if (raw instanceof Uint8Array) return { $bytes: Buffer.from(raw).toString("base64") }
      if (raw instanceof Error) return { $error: raw.message }
      return v
    }) ?? "null"
  )

/** A taped value as the SDK takes it back. */
export const fromTape = (value: Json): any =>
  JSON.parse(JSON.stringify(value), (_key, v) => {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      const keys = Object.keys(v)
      if (keys.length === 1 && keys[0] === "$date") return new Date(v.$date)
      if (keys.length === 1 && keys[0] === "$bytes") return new Uint8Array(Buffer.from(v.$bytes, "base64"))
      if (keys.length === 1 && keys[0] === "$error") return new Error(v.$error)
    }
    return v
  })

const outcomeOf = (error: unknown): TapedOutcome =>
  error instanceof TurnFailed ? { turnFailed: error.failure }
  : error instanceof TurnAborted ? { aborted: true }
  : { error: error instanceof Error ? error.message : String(error) }

/** The tape of one running turn, filled by the model, the tools and the clock it hands out. */
export class TapeRecorder {
  private readonly modelCalls: Array<TapedModelCall> = []
  private readonly toolCalls: Array<TapedToolCall> = []
  private readonly clockReadings: Array<number> = []
  private input: TurnTape["input"] = { system: "", messages: [] }

  constructor(private readonly settings: TapeSettings) {}

  /** What the model was sent on the first round. */
  sent(system: string, messages: ReadonlyArray<ModelMessage>): void {
    this.input = { system, messages: toTape(messages) }
  }

  /** The model, each of its calls taped as it answers. */
  model(model: LanguageModelV3): LanguageModelV3 {
    const calls = this.modelCalls
    return wrapLanguageModel({
      model,
      middleware: {
        specificationVersion: "v3",
        wrapGenerate: async ({ doGenerate }) => {
          const result = await doGenerate()
          calls.push({ kind: "generate", result: toTape({ ...result, request: undefined, response: { ...result.response, body: undefined } }) })
          return result
        },
        wrapStream: async ({ doStream }) => {
          const result = await doStream()
          const parts: Array<Json> = []
          // taped in the order the call was made, whenever its parts arrive
          calls.push({ kind: "stream", parts })
          const tap = new TransformStream<LanguageModelV3StreamPart, LanguageModelV3StreamPart>({
            transform: (part, controller) => {
              if (part.type !== "raw") parts.push(toTape(part))
              controller.enqueue(part)
            }
          })
          return { ...result, stream: result.stream.pipeThrough(tap) }
        }
      }
    })
  }

  /** The turn's tool calls, each call's result taped as its tool answers. */
  calls(calls: TurnToolCalls): TurnToolCalls {
    return {
      execute: async (tool, input, toolCallId) => {
        const call = { toolCallId, toolName: toolNameOfCall(tool), input: toTape(input) }
        try {
          const output = await calls.execute(tool, input, toolCallId)
          this.toolCalls.push({ ...call, outcome: { output: toTape(output) } })
          return output
        } catch (error) {
          this.toolCalls.push({ ...call, outcome: outcomeOf(error) })
          throw error
        }
      }
    }
  }

  /** The clock, each reading taped. */
  clock(now: () => number): () => number {
    return () => {
      const reading = now()
      this.clockReadings.push(reading)
      return reading
    }
  }

  tape(): TurnTape {
    return { version: TAPE_VERSION, settings: this.settings, input: this.input, modelCalls: this.modelCalls, toolCalls: this.toolCalls, clock: this.clockReadings }
  }
}

/** What a replay found its code asking that the tape does not hold, or holds otherwise. */
export class OffTape extends Error {
  constructor(readonly field: string, readonly recorded: unknown, readonly replayed: unknown, readonly toolCallId: string | null = null) {
    super(`${field}: ${toolCallId === null ? "" : `tool call ${toolCallId}: `}recorded ${show(recorded)}, replayed ${show(replayed)}`)
  }
}

const show = (value: unknown): string => (value === undefined ? "nothing" : JSON.stringify(value))

/** The first member path where two JSON values differ ("" when they are the same). */
export const firstDifference = (recorded: unknown, replayed: unknown, at = ""): string | undefined => {
  // the log may keep members in another order (Postgres' jsonb does): the same value, canonically
  if (recorded === replayed || (recorded !== undefined && replayed !== undefined && canonicalJson(recorded as Json) === canonicalJson(replayed as Json))) return undefined
  if (recorded !== null && replayed !== null && typeof recorded === "object" && typeof replayed === "object" && Array.isArray(recorded) === Array.isArray(replayed)) {
    const keys = [...new Set([...Object.keys(recorded), ...Object.keys(replayed)])]
    for (const key of keys) {
      const found = firstDifference((recorded as Record<string, unknown>)[key], (replayed as Record<string, unknown>)[key], at === "" ? key : `${at}.${key}`)
      if (found !== undefined) return found
    }
  }
  return at
}

/**
 * The tape played back: a model that answers each call with the next taped one, tools that answer
 * each call with its taped result, and a clock that gives the taped readings. Nothing here reaches
 * a model or a tool; asking for what the tape lacks throws `OffTape`, which ends the replay.
 * What the turn's own code decides of a call is decided again: whether it parks the call for
 * approval (`parks`, from the capabilities this build registers), against the taped outcome.
 */
export const tapePlayer = (tape: TurnTape, parks: (toolName: string) => boolean) => {
  let nextCall = 0
  let nextReading = 0
  const takeCall = (kind: TapedModelCall["kind"]): TapedModelCall => {
    const call = tape.modelCalls[nextCall]
    if (call === undefined || call.kind !== kind) throw new OffTape(`model call ${nextCall + 1}`, call?.kind, `a ${kind} call not on the tape`)
    nextCall += 1
    return call
  }
  const model: LanguageModelV3 = {
    specificationVersion: "v3",
    provider: "tape",
    modelId: tape.settings.model,
    supportedUrls: {},
    doGenerate: async (_options: LanguageModelV3CallOptions) => {
      const call = takeCall("generate")
      return fromTape((call as Extract<TapedModelCall, { kind: "generate" }>).result)
    },
    doStream: async (_options: LanguageModelV3CallOptions) => {
      const call = takeCall("stream") as Extract<TapedModelCall, { kind: "stream" }>
      const parts: Array<LanguageModelV3StreamPart> = call.parts.map(fromTape)
      return {
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start: (controller) => {
            for (const part of parts) controller.enqueue(part)
            controller.close()
          }
        })
      }
    }
  }
  const played = new Set<string>()
  const tools: ToolSet = {}
  for (const { toolName } of tape.settings.tools) {
    tools[toolName] = dynamicTool({
      description: toolName,
      inputSchema: jsonSchema({ type: "object" }),
      execute: async (input, options) => {
        const asked = toTape(input)
        const taped = tape.toolCalls.find((call) => call.toolCallId === options.toolCallId)
        if (taped === undefined) throw new OffTape("tool call not on the tape", undefined, { toolName, input: asked }, options.toolCallId)
        if (taped.toolName !== toolName) throw new OffTape("tool", taped.toolName, toolName, options.toolCallId)
        const differs = firstDifference(taped.input, asked)
        if (differs !== undefined) {
          throw new OffTape(differs === "" ? "input" : `input.${differs}`, valueAt(taped.input, differs), valueAt(asked, differs), options.toolCallId)
        }
        const outcome = taped.outcome
        const parked = "output" in outcome && isParked(outcome.output)
        if (parks(toolName) !== parked) throw new OffTape("outcome.parked", parked, parks(toolName), options.toolCallId)
        played.add(taped.toolCallId)
        if ("output" in outcome) return fromTape(outcome.output)
        if ("turnFailed" in outcome) throw new TurnFailed(outcome.turnFailed)
        if ("aborted" in outcome) throw new TurnAborted()
        throw new Error(outcome.error)
      }
    })
  }
  const now = () => {
    const reading = tape.clock[nextReading]
    if (reading === undefined) throw new OffTape(`clock reading ${nextReading + 1}`, undefined, "a reading not on the tape")
    nextReading += 1
    return reading
  }
  /** Taped calls the replay never asked for: the recorded turn made them, the replayed one did not. */
  const unplayed = () => ({ modelCalls: tape.modelCalls.length - nextCall, toolCalls: tape.toolCalls.filter((call) => !played.has(call.toolCallId)) })
  return { model, tools, now, unplayed }
}

/** Whether a taped output is a call parked for approval (src/assistant/AgentTools.ts answers the model so). */
const isParked = (output: Json): boolean => output !== null && typeof output === "object" && !Array.isArray(output) && (output as { readonly parked?: Json }).parked === true

/** The value at a member path `firstDifference` names ("" is the whole value). */
export const valueAt = (value: unknown, path: string): unknown =>
  path === "" ? value : path.split(".").reduce<any>((at, key) => (at === null || typeof at !== "object" ? undefined : at[key]), value)
