/**
 * A real SMTP server (the `smtp-server` package) on 127.0.0.1 that accepts every message and keeps
 * it, for tests of the email mirror of notifications: `SMTP_URL` is `sink.url`.
 */
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"

export interface ReceivedMail {
  readonly from: string
  readonly to: ReadonlyArray<string>
  /** The whole message as sent (headers and body, MIME encoded). */
  readonly raw: string
  /** The message with quoted-printable soft line breaks and escapes undone, to search for text. */
  readonly decoded: string
}

const decodeQuotedPrintable = (raw: string) =>
  Buffer.from(raw.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), "latin1").toString("utf8")

export interface SmtpSink {
  readonly url: string
  readonly messages: ReadonlyArray<ReceivedMail>
  /** Resolves once `count` messages have arrived (rejects after `timeoutMs`). */
  readonly received: (count: number, timeoutMs?: number) => Promise<ReadonlyArray<ReceivedMail>>
  readonly close: () => Promise<void>
}

export const startSmtpSink = async (): Promise<SmtpSink> => {
  const messages: Array<ReceivedMail> = []
  const server = new SMTPServer({
    // plain local SMTP, as a relay inside a private network is often reached
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData: (stream, session, callback) => {
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8")
        messages.push({
          from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          decoded: decodeQuotedPrintable(raw)
        })
        callback()
      })
    }
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const { port } = server.server.address() as AddressInfo
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    received: async (count, timeoutMs = 10_000) => {
      const until = Date.now() + timeoutMs
      while (messages.length < count) {
        if (Date.now() > until) throw new Error(`the SMTP sink received ${messages.length} of ${count} messages`)
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
      return messages
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
