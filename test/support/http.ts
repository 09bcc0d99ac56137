/** A small JSON client for the platform's REST surface. */
export interface Reply {
  readonly status: number
  readonly body: any
  /** The `Svc-Position` header of an answer to a write: where its events are in the log. */
  readonly position?: string | undefined
}

export const call = async (baseUrl: string, key: string | undefined, path: string, input?: unknown, headers: Record<string, string> = {}): Promise<Reply> => {
  const response = await fetch(`${baseUrl}${path}`, {
    method: input === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json", ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers },
    body: input === undefined ? undefined : JSON.stringify(input)
  })
  const text = await response.text()
  const position = response.headers.get("svc-position")
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text), ...(position === null ? {} : { position }) }
}

/**
 * What a client that reads its writes through any node keeps: the highest log position per
 * partition of the answers it got, sent back as `Svc-Position` on every call.
 */
export const writePositions = () => {
  const seen = new Map<number, number>()
  return {
    headers: (): Record<string, string> =>
      seen.size === 0 ? {} : { "svc-position": [...seen].map(([partition, offset]) => `${partition}:${offset}`).join(",") },
    note: (reply: Reply): Reply => {
      for (const pair of reply.position?.split(",") ?? []) {
        const [partition, offset] = pair.split(":").map(Number)
        if (!(seen.get(partition)! >= offset)) seen.set(partition, offset)
      }
      return reply
    }
  }
}

/** Invokes a workspace capability by name (`node.create` -> `/v1/{org}/{ws}/node/create`). */
export const capability = (baseUrl: string, key: string, org: string, workspace: string) =>
  (name: string, input: unknown, headers?: Record<string, string>) =>
    call(baseUrl, key, `/v1/${org}/${workspace}/${name.replaceAll(".", "/")}`, input, headers)

/**
 * The bootstrap workspace key of the node `nodeOf` gives (read when called: suites start their
 * node in beforeAll) as a caller that reads its own writes: each call carries the positions of
 * the calls before it.
 */
export const bootstrapKeyReadingOwnWrites = (nodeOf: () => { readonly baseUrl: string; readonly bootstrap: { readonly orgSlug: string; readonly workspaceSlug: string; readonly workspaceKey: string } }) => {
  const positions = writePositions()
  return async (name: string, input: unknown) => {
    const { baseUrl, bootstrap } = nodeOf()
    return positions.note(await capability(baseUrl, bootstrap.workspaceKey, bootstrap.orgSlug, bootstrap.workspaceSlug)(name, input, positions.headers()))
  }
}
