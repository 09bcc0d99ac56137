/**
 * `codegraph.search`: asks the code graph service named by `CODEGRAPH_URL` for the code that
 * matches a query. The service is outside this platform; its protocol is one call, `POST
 * <url>/search` with `{query, limit}`, answering `{results: [{path, symbol?, line?, snippet?}]}`.
 * Called through the outbound guard, so a service on loopback or a private address needs
 * `OUTBOUND_ALLOW`. Not set up, not answering (or refused), or answering something else:
 * `CodegraphUnavailable`, which ends an assistant turn with `codegraph_unavailable` (spec 7.2).
 */
import { Effect, Schema } from "effect"
import { AssistantSettings } from "../assistant/Settings.ts"
import { type AnyCapability, implement } from "../checkpoint/Capability.ts"
import { nodeFetch } from "../platform/Outbound.ts"
import * as Api from "./Api.ts"

export class CodegraphUnavailable extends Schema.TaggedError<CodegraphUnavailable>()("CodegraphUnavailable", {
  message: Schema.String
}) {}

/** How long the service may take before it counts as not answering. */
const TIMEOUT_MS = 5_000

export const searchCodegraph = implement(Api.searchCodegraph, (invocation, input) =>
  Effect.gen(function* () {
    const { codegraphUrl } = yield* AssistantSettings
    if (codegraphUrl === undefined) return yield* new CodegraphUnavailable({ message: "no code graph service is set up (CODEGRAPH_URL)" })
    const fetch = yield* nodeFetch
    const response = yield* Effect.tryPromise({
      try: (signal) =>
        fetch(`${codegraphUrl.replace(/\/+$/, "")}/search`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ workspaceId: invocation.workspaceId, query: input.query, limit: input.limit ?? 10 }),
          signal: AbortSignal.any([signal, AbortSignal.timeout(TIMEOUT_MS)])
        }),
      catch: () => new CodegraphUnavailable({ message: "the code graph service is not answering" })
    })
    if (!response.ok) return yield* new CodegraphUnavailable({ message: `the code graph service answered ${response.status}` })
    const body = yield* Effect.tryPromise({ try: () => response.json(), catch: () => new CodegraphUnavailable({ message: "the code graph service answered no JSON" }) })
    return yield* Schema.decodeUnknown(Api.CodegraphAnswer)(body).pipe(
      Effect.mapError(() => new CodegraphUnavailable({ message: "the code graph service answered in an unknown shape" }))
    )
  })
)

export const codegraphCapabilities: ReadonlyArray<AnyCapability> = [searchCodegraph]
