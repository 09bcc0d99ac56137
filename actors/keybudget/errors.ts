/** The key budget actor's only rejection. */
import { Schema } from "effect"

/** The window's budget is handed out: no node may start another turn for the key before it ends. */
export class BudgetSpent extends Schema.TaggedError<BudgetSpent>()("BudgetSpent", {
  /** ISO 8601. */
  windowEnd: Schema.String
}) {
  override get message() {
    return `the key's budget is spent until ${this.windowEnd}`
  }
}

export const KeyBudgetError = BudgetSpent
export type KeyBudgetError = BudgetSpent
