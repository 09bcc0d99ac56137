/** The JSON `data:` payloads of a whole SSE body, in order, read with a real SSE parser. */
import { createParser } from "eventsource-parser"

export const sseEnvelopes = (text: string): Array<any> => {
  const envelopes: Array<any> = []
  const parser = createParser({ onEvent: (event) => void envelopes.push(JSON.parse(event.data)) })
  parser.feed(text)
  return envelopes
}
