/** What the A2A task tests write alike: text parts, and A2A messages of one task. */
import type { A2aMessage } from "../../actors/a2atask/events.ts"

/** One text part. */
export const text = (t: string) => [{ kind: "text" as const, text: t }]

/** Messages of the task `taskId` in the context `contextId`, each one text part. */
export const messagesOf = ({ taskId, contextId }: { readonly taskId: string; readonly contextId: string }) =>
  (role: "user" | "agent", messageId: string, t: string): A2aMessage => ({ kind: "message", role, parts: text(t), messageId, taskId, contextId })
