/** A person's account. The fields beyond registration default, so states persisted before they
 * existed still decode. */
import { Schema } from "effect"

const nullByDefault = <S extends Schema.Schema.Any>(schema: S) =>
  Schema.optionalWith(Schema.NullOr(schema), { default: () => null, exact: true })

export const UserState = Schema.Union(
  Schema.TaggedStruct("Absent", {}),
  Schema.TaggedStruct("Registered", {
    userId: nullByDefault(Schema.String),
    passwordHash: nullByDefault(Schema.String),
    totpPendingSealed: nullByDefault(Schema.String),
    totpSecretSealed: nullByDefault(Schema.String),
    mfaEnabledAt: nullByDefault(Schema.String),
    /** providerId -> subject */
    ssoIdentities: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.String }), { default: () => ({}), exact: true })
  })
)
export type UserState = typeof UserState.Type
export type RegisteredUser = Extract<UserState, { readonly _tag: "Registered" }>

export const initialUserState: UserState = { _tag: "Absent" }
