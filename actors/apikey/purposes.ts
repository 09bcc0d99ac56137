/** Values of the reserved scope key `purpose` (spec 5 rules 8-9): machine credentials and CLI
 * logins. Only the operator's command line and the device login issue them, never `create_api_key`. */
export const RESERVED_SCOPE_KEY = "purpose"

export const KNOWN_PURPOSES = ["cli_session_v1", "svc_host_v1", "svc_gateway_v1", "svc_telemetry_v1"] as const
export type KnownPurpose = (typeof KNOWN_PURPOSES)[number]

export const isKnownPurpose = (value: string | undefined): value is KnownPurpose =>
  value !== undefined && (KNOWN_PURPOSES as ReadonlyArray<string>).includes(value)

/** `createdBy` of credentials the operator issues from the command line: no person is behind them,
 * so rules about a key's creator (Require SSO) do not apply to them. */
export const OPERATOR = "operator"
