/**
 * Spec 7.2: how a failure after the stream opened is told. The provider's own refusals and
 * failures, as the model adapters classify them, are `model_call_failed` (or the operator's
 * balance); a fault of this node has no stable code: `Stream error`, and no code.
 */
import { APICallError, InvalidResponseDataError } from "@ai-sdk/provider"
import { describe, expect, it } from "vitest"
import { describeTurnError } from "../../src/assistant/Turn.ts"

const providerRefused = (statusCode: number) =>
  new APICallError({ message: "refused", url: "http://127.0.0.1/v1/chat/completions", requestBodyValues: {}, statusCode, responseBody: "{}" })

describe("a failure after the stream opened (spec 7.2)", () => {
  it.each([
    ["the provider refuses the call", providerRefused(400), { code: "model_call_failed", reason: null }],
    ["the provider fails the call", providerRefused(500), { code: "model_call_failed", reason: null }],
    ["the provider's answer cannot be read", new InvalidResponseDataError({ data: {}, message: "no choices" }), { code: "model_call_failed", reason: null }],
    ["the operator's provider account is out of balance", providerRefused(402), { code: "platform_provider_balance", reason: null }],
    ["a fault of this node", new TypeError("Cannot read properties of undefined (reading 'text')"), { code: null, reason: null, message: "Stream error" }],
    ["a thrown non-error", "boom", { code: null, reason: null, message: "Stream error" }]
  ])("%s", (_name, error, expected) => {
    expect(describeTurnError(error, "operator")).toMatchObject(expected)
  })
})
