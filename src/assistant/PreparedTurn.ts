/**
 * A turn as the checkpoint hands it on: who asks, where, with what model, tools and agent. Its own
 * module, so the turn and the agent's tools both read it without importing each other.
 */
import type { Invocation, Registry } from "../checkpoint/Capability.ts"
import type { TurnPlace } from "../platform/Admission.ts"
import type { Goal } from "./Goal.ts"
import type { ResolvedModel } from "./models/resolve.ts"
import type { AgentTool } from "./Tools.ts"

/** A turn the checkpoint let through, with everything 7.1 checks already passed. */
export interface PreparedTurn {
  readonly invocation: Invocation
  /** The place the turn's tool calls act in. */
  readonly path: { readonly orgSlug: string; readonly workspaceSlug: string }
  /** The person the turn belongs to: the session's, or the key's creator. */
  readonly userId: string
  /** A cnv_ id or UUID naming an existing conversation; null starts one. */
  readonly conversationRef: string | null
  /** The public id of the conversation a first turn starts (A2A derives its context id from it); null: a new one. */
  readonly newConversationPublicId: string | null
  readonly content: string
  readonly attachments: ReadonlyArray<string>
  readonly goal: Goal | null
  readonly turnId: string | null
  /** The run the turn records, minted as it is prepared: an A2A task records it with its submission. */
  readonly runId: string
  readonly model: ResolvedModel
  readonly tools: ReadonlyArray<AgentTool>
  readonly registry: Registry
  /** The workspace agent the turn runs as; null: the built-in workspace assistant. */
  readonly agent: {
    readonly name: string
    readonly instructions: string
    /** Its attached skills that still exist, at their current versions, in the order attached. */
    readonly skills: ReadonlyArray<{ readonly slug: string; readonly name: string; readonly version: number; readonly instructions: string }>
  } | null
  /** The app page the person was on (spec 2.2), as the model is shown it (src/assistant/Turn.ts); null: none. */
  readonly pageContext: string | null
  /**
   * The turn's place in the node (src/platform/Admission.ts), taken before its checks: whoever
   * holds the turn gives it back, as the turn ends or as what would start it fails.
   */
  readonly place: TurnPlace
}
