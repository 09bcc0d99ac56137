/**
 * The chat page's SSE reader (app/src/pages/chat/sse.ts): however the bytes are cut into pieces,
 * the same events come out, in order; comments are skipped; multi-line data is joined.
 */
import { describe, expect, it } from "vitest"
import { createSseReader, type SseMessage } from "../../app/src/pages/chat/sse.ts"

const STREAM = [
  'data: {"type":"run","runId":"tse_1"}\n\n',
  ": keep-alive\n\n",
  'data: {"type":"text","text":"Hel"}\r\n\r\n',
  'data:{"type":"text","text":"lo"}\r\rdata: first line\ndata: second line\n\n',
  "event: done\ndata: [DONE]\n\n"
].join("")

const EXPECTED: ReadonlyArray<SseMessage> = [
  { event: undefined, data: '{"type":"run","runId":"tse_1"}' },
  { event: undefined, data: '{"type":"text","text":"Hel"}' },
  { event: undefined, data: '{"type":"text","text":"lo"}' },
  { event: undefined, data: "first line\nsecond line" },
  { event: "done", data: "[DONE]" }
]

const read = (pieces: ReadonlyArray<string>) => {
  const messages: Array<SseMessage> = []
  const reader = createSseReader((message) => messages.push(message))
  for (const piece of pieces) reader.feed(piece)
  return messages
}

describe("the chat stream's SSE reader", () => {
  it("reads a whole body at once", () => {
    expect(read([STREAM])).toEqual(EXPECTED)
  })

  it("reads the same body cut at every place into two pieces, and one character at a time", () => {
    for (let at = 0; at <= STREAM.length; at++) expect(read([STREAM.slice(0, at), STREAM.slice(at)])).toEqual(EXPECTED)
    expect(read([...STREAM])).toEqual(EXPECTED)
  })

  it("hands nothing over before an event's blank line has arrived", () => {
    expect(read(['data: {"type":"text","text":"x"}\n'])).toEqual([])
  })
})
