/**
 * Outbound email through SMTP (`SMTP_URL`, sender `MAIL_FROM`) with nodemailer. The server is the
 * operator's own configuration, not a user-supplied address, so it does not pass the outbound
 * address guard. Unset: no email is sent, and saying so is a failure the caller records.
 */
import { Context, Effect, Layer, Schema } from "effect"
import nodemailer from "nodemailer"

export interface MailMessage {
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html?: string
}

/** The message was not accepted: no server configured, or the server refused or did not answer. */
export class MailFailed extends Schema.TaggedError<MailFailed>()("MailFailed", {
  reason: Schema.Literal("not_configured", "unavailable", "refused"),
  message: Schema.String
}) {}

export interface MailerService {
  readonly configured: boolean
  /** Resolves once the SMTP server accepted the message. */
  readonly send: (message: MailMessage) => Effect.Effect<void, MailFailed>
}

export class Mailer extends Context.Tag("svc/Mailer")<Mailer, MailerService>() {}

export interface MailSettings {
  readonly smtpUrl: string | undefined
  readonly from: string
}

/** An SMTP reply code means the server answered and refused; anything else is a server not reached. */
const failureOf = (error: unknown): MailFailed => {
  const e = error as { readonly responseCode?: number; readonly code?: string; readonly message?: string }
  return e.responseCode !== undefined
    ? new MailFailed({ reason: "refused", message: `the mail server refused the message (${e.responseCode})` })
    : new MailFailed({ reason: "unavailable", message: `the mail server did not take the message (${e.code ?? "error"})` })
}

const notConfigured: MailerService = {
  configured: false,
  send: () => Effect.fail(new MailFailed({ reason: "not_configured", message: "no mail server is configured (SMTP_URL)" }))
}

export const layer = (settings: MailSettings) =>
  settings.smtpUrl === undefined
    ? Layer.succeed(Mailer, notConfigured)
    : Layer.scoped(
        Mailer,
        Effect.acquireRelease(
          Effect.sync(() =>
            // short timeouts: a mail server that hangs must not hold the notice's sender for minutes
            nodemailer.createTransport({ url: settings.smtpUrl, connectionTimeout: 5_000, greetingTimeout: 5_000, socketTimeout: 10_000 }, { from: settings.from })
          ),
          (transport) => Effect.sync(() => transport.close())
        ).pipe(
          Effect.map((transport): MailerService => ({
            configured: true,
            send: (message) =>
              Effect.tryPromise({ try: () => transport.sendMail(message), catch: failureOf }).pipe(
                Effect.asVoid,
                Effect.withSpan("Mailer.send", { captureStackTrace: false })
              )
          }))
        )
      )
