/**
 * A burst of POSTs sent at once from another process, so that the node under test (in this one)
 * spends its event loop on the requests and nothing on the client's side of them. Each answer is
 * read to its end: its status, the headers a refusal carries, its JSON body or, for a stream, its
 * data events and the `done` event's data.
 */
import { execFile } from "node:child_process"

export interface BurstAnswer {
  readonly status: number
  readonly contentType: string | null
  readonly retryAfter: string | null
  /** The JSON body of an answer that is not a stream. */
  readonly body: any
  /** The parsed `data:` JSON of a stream's unnamed events, in order. */
  readonly events: ReadonlyArray<any>
  /** A stream's `done` data: the parsed result, or `[DONE]`. */
  readonly done: any
}

const CLIENT = `
const { url, headers, body, count } = JSON.parse(process.env.BURST)
const one = async () => {
  const response = await fetch(url, { method: "POST", headers, body })
  const text = await response.text()
  const contentType = response.headers.get("content-type")
  const answer = { status: response.status, contentType, retryAfter: response.headers.get("retry-after"), body: undefined, events: [], done: undefined }
  if (!(contentType ?? "").startsWith("text/event-stream")) {
    answer.body = text === "" ? undefined : JSON.parse(text)
    return answer
  }
  for (const block of text.split("\\n\\n")) {
    const lines = block.split("\\n")
    const event = lines.find((line) => line.startsWith("event: "))?.slice(7)
    const data = lines.filter((line) => line.startsWith("data: ")).map((line) => line.slice(6)).join("\\n")
    if (data === "") continue
    if (event === "done") answer.done = data === "[DONE]" ? data : JSON.parse(data)
    else if (event === undefined) answer.events.push(JSON.parse(data))
  }
  return answer
}
const answers = await Promise.all(Array.from({ length: count }, one))
process.stdout.write(JSON.stringify(answers))
`

/** Sends `count` POSTs of `body` to `url` at once from a child process; resolves with every answer, in order. */
export const burstFromAnotherProcess = (url: string, headers: Record<string, string>, body: string, count: number): Promise<ReadonlyArray<BurstAnswer>> =>
  new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--input-type=module", "-e", CLIENT],
      { env: { ...process.env, BURST: JSON.stringify({ url, headers, body, count }) }, maxBuffer: 256 * 1024 * 1024 },
      (error, stdout, stderr) => (error !== null ? reject(new Error(`the burst failed: ${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)))
    )
  })
