/** The billing actor's only rejection: it meters turns that already ran, so it refuses no charge. */
import { Schema } from "effect"

/** Balances are kept exactly (a double holds whole numbers exactly up to 2^53); a grant that would
 * take the balance past this is refused. */
export const MAX_BALANCE = 1_000_000_000_000_000

export class CreditsLimitExceeded extends Schema.TaggedError<CreditsLimitExceeded>()("CreditsLimitExceeded", {
  orgId: Schema.String,
  balance: Schema.Int,
  amount: Schema.Int
}) {
  override get message() {
    return `granting ${this.amount} credits to a balance of ${this.balance} would exceed ${MAX_BALANCE}`
  }
}

export const BillingError = Schema.Union(CreditsLimitExceeded)
export type BillingError = typeof BillingError.Type
