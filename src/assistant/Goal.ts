/**
 * A turn with a goal runs in rounds: after each round but the last, the model judges whether the
 * reply meets the goal, and the turn goes on while it does not.
 */
import { generateText, type ModelMessage } from "ai"
import { Effect } from "effect"
import type { ResolvedModel } from "./models/resolve.ts"

export interface Goal {
  readonly statement: string
  readonly maxRounds: number
}

const JUDGE_PROMPT =
  "[judge] You check whether the assistant's last reply meets the goal below. Answer only JSON {\"met\": boolean, \"reason\": string}."

const parseVerdict = (text: string): { readonly met: boolean; readonly reason: string } => {
  try {
    const start = text.indexOf("{")
    const parsed = JSON.parse(text.slice(start, text.lastIndexOf("}") + 1)) as { met?: unknown; reason?: unknown }
    return { met: parsed.met === true, reason: typeof parsed.reason === "string" ? parsed.reason : "" }
  } catch {
    // a judge that does not answer in JSON cannot hold the turn back
    return { met: true, reason: "the goal check gave no verdict" }
  }
}

/** The model's verdict on a round's reply, and the tokens the check took; fails with what broke the model call. */
export const judgeRound = (model: Pick<ResolvedModel, "model" | "providerOptions">, goal: Goal, messages: ReadonlyArray<ModelMessage>, roundReply: string, signal: AbortSignal) =>
  Effect.tryPromise({
    try: () =>
      generateText({
        model: model.model,
        system: `${JUDGE_PROMPT}\nGoal: ${goal.statement}`,
        messages: [...messages, { role: "assistant", content: roundReply }],
        providerOptions: model.providerOptions,
        abortSignal: signal,
        maxRetries: 0
      }),
    catch: (error) => error
  }).pipe(Effect.map((judged) => ({ verdict: parseVerdict(judged.text), usage: judged.usage })))

/** What the model reads when the goal is not met yet. */
export const continueTowards = (reason: string): ModelMessage => ({ role: "user", content: `[goal check] The goal is not met yet: ${reason}. Continue.` })
