/**
 * A model that asks the person a question on every call (an OpenAI-compatible chat-completions
 * server on loopback): an agent on it leaves every task `input-required`, never completed, so its
 * tasks take follow-up messages and can be canceled after a blocking `message/send`. The A2A TCK
 * run (scripts/a2a-tck.sh) uses it to show which tests depend on the agent rather than on the
 * protocol. Prints its base URL (`OPENAI_BASE_URL`) once it listens.
 */
import { ASK_USER } from "../src/assistant/Tools.ts"
import { startOpenAiServer } from "../test/support/openaiServer.ts"

const server = await startOpenAiServer({
  otherwise: () => ({ kind: "tool", name: ASK_USER, arguments: { question: "Anything else?", options: ["yes", "no"] } })
})
console.log(server.url)
