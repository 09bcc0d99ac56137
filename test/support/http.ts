/** A small JSON client for the platform's REST surface. */
export interface Reply {
  readonly status: number
  readonly body: any
}

export const call = async (baseUrl: string, key: string | undefined, path: string, input?: unknown, headers: Record<string, string> = {}): Promise<Reply> => {
  const response = await fetch(`${baseUrl}${path}`, {
    method: input === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json", ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...headers },
    body: input === undefined ? undefined : JSON.stringify(input)
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
}

/** Invokes a workspace capability by name (`node.create` -> `/v1/{org}/{ws}/node/create`). */
export const capability = (baseUrl: string, key: string, org: string, workspace: string) =>
  (name: string, input: unknown, headers?: Record<string, string>) =>
    call(baseUrl, key, `/v1/${org}/${workspace}/${name.replaceAll(".", "/")}`, input, headers)
