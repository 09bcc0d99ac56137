/**
 * The app speaks only the public API, with the session cookie, like any other client. Every
 * capability is `POST /v1/{org}/{ws}/<name with / for .>` (or `/v1/<name>` for those acting on the
 * caller); errors are `{ error: { code, reason?, message } }` and surface as ApiError, whose words
 * the pages show.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly reason: string | undefined,
    message: string
  ) {
    super(message)
  }
}

/** Where a workspace-scoped call goes. */
export interface Place {
  readonly org: string
  readonly ws: string
}

/** The ApiError a failed response stands for (its JSON error body, or the status in words). */
export const readError = async (response: Response): Promise<ApiError> => {
  const text = await response.text().catch(() => "")
  try {
    const body = JSON.parse(text) as { error?: { code?: string; reason?: string; message?: string } | string }
    const error = typeof body.error === "string" ? { code: body.error } : body.error
    if (error !== undefined) {
      return new ApiError(response.status, error.code ?? "error", error.reason, error.message ?? `${error.code ?? "error"} (${response.status})`)
    }
  } catch {
    // not JSON: a proxy's page or a dropped connection
  }
  return new ApiError(response.status, "http_error", undefined, `the server answered ${response.status} ${response.statusText}`.trim())
}

/** A JSON request to the API; resolves with the parsed body, rejects with ApiError. */
export const request = async <T>(path: string, init: { method?: string; body?: unknown; signal?: AbortSignal; headers?: Record<string, string> } = {}): Promise<T> => {
  let response: Response
  try {
    response = await fetch(path, {
      method: init.method ?? "POST",
      credentials: "same-origin",
      headers: { ...(init.body === undefined ? {} : { "content-type": "application/json" }), accept: "application/json", ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: init.signal
    })
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === "AbortError") throw cause
    throw new ApiError(0, "network_error", undefined, "the server could not be reached; check your connection and try again")
  }
  if (!response.ok) throw await readError(response)
  const text = await response.text()
  return (text === "" ? undefined : JSON.parse(text)) as T
}

const routeOf = (capability: string) => capability.replaceAll(".", "/")

/** Invokes a workspace- or organization-scoped capability in `place`. */
export const invoke = <T>(place: Place, capability: string, input: unknown = {}, init: { method?: string; signal?: AbortSignal } = {}): Promise<T> =>
  request<T>(`/v1/${encodeURIComponent(place.org)}/${encodeURIComponent(place.ws)}/${routeOf(capability)}`, { ...init, body: input })

/** Invokes a capability acting on the caller itself (`/v1/<name>`). */
export const invokeOwn = <T>(capability: string, input: unknown = {}): Promise<T> => request<T>(`/v1/${routeOf(capability)}`, { body: input })

/** A message fit to show a person for any failure. */
export const describeError = (error: unknown): string => {
  if (error instanceof ApiError) return error.reason === undefined ? error.message : `${error.message} (${error.reason})`
  if (error instanceof Error) return error.message
  return "something went wrong"
}
