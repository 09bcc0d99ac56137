/**
 * Read-your-writes across nodes: a write's answer names the log positions of its events as
 * `Svc-Position`; a read through another node sends them back and waits until its read models
 * hold them (README, "Writes and reads").
 */
import { formatPositions } from "../src/checkpoint/Checkpoint.ts"
import type { HttpReply } from "./http.ts"

export const POSITION_HEADER = "svc-position"

/** The reply, with the positions of the call's writes when it wrote. */
export const withPositions = (reply: HttpReply, written: ReadonlyMap<number, number>): HttpReply =>
  written.size === 0 ? reply : { ...reply, headers: { ...reply.headers, [POSITION_HEADER]: formatPositions(written) } }
