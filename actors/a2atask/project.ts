/** Read model: `a2a_tasks` (migration 0011), one full row per task written from the state after
 * each event; tasks/get reads it (src/a2a/Queries.ts). */
import type { EventContext, RowOp } from "../kernel.ts"
import type { A2aTaskEvent } from "./events.ts"
import type { A2aTaskState } from "./state.ts"

export const project = (after: A2aTaskState, _event: A2aTaskEvent, _ctx: EventContext): ReadonlyArray<RowOp> => {
  if (after._tag === "Absent") return []
  return [
    {
      op: "upsert",
      table: "a2a_tasks",
      pk: ["task_id"],
      row: {
        task_id: after.taskId,
        context_id: after.contextId,
        org_id: after.orgId,
        workspace_id: after.workspaceId,
        user_id: after.userId,
        api_key_id: after.apiKeyId,
        conversation_id: after.conversationId,
        turn_id: after.turnId,
        run_id: after.runId,
        state: after.state,
        status_message: after.statusMessage,
        history: after.history,
        artifacts: after.artifacts,
        pending_question_id: after.pendingQuestionId,
        created_at: after.createdAt,
        updated_at: after.updatedAt
      }
    }
  ]
}
