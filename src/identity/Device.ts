/**
 * Approving and denying a CLI device login (src/identity/DeviceLogin.ts). They are capabilities, so they
 * pass the one checkpoint: a signed-in person of the organization (rule 7's SSO and two-factor
 * checks included) names the workspace in the path. Only a browser session may decide: a key is
 * refused by the checkpoint (`requiresPerson`), and a CLI login here, since one CLI login must not
 * mint another. A user code is a secret to guess, guarded per person and per client address like a
 * password (src/identity/Lockout.ts): a well-formed code that names no login counts as a failure.
 */
import { Effect } from "effect"
import { DeviceActor } from "../../actors/device/actor.ts"
import { ApproveDevice, DenyDevice } from "../../actors/device/protocol.ts"
import { ActorHost } from "../../streams/ActorHost.ts"
import { type AnyCapability, implement, type Invocation } from "../checkpoint/Capability.ts"
import { findDeviceByUserCode, normalizeUserCode } from "./DeviceLogin.ts"
import { Forbidden } from "../platform/Errors.ts"
import { admit, countFailure, type Guesses, refuseWhileLocked } from "./Lockout.ts"
import * as Api from "./Api.ts"

/** The deciding person, who must be signed in with a browser session. */
const sessionPerson = (invocation: Invocation) =>
  invocation.principal.credential === "session" && invocation.principal.userId !== null
    ? Effect.succeed(invocation.principal.userId)
    : new Forbidden({
        reason: "session_required",
        message: `${invocation.capability} needs a signed-in browser session; a key or CLI login cannot approve or deny a CLI login`
      })

/**
 * The device login whose user code the person entered, through the guards of their guesses. A
 * malformed code is no guess (no code has its shape) and is refused without counting.
 */
const findGuarded = (invocation: Invocation, userId: string, userCode: string) =>
  Effect.gen(function* () {
    const guesses: Guesses = { flow: "device_code", account: userId, address: invocation.clientAddress }
    const { actor } = invocation.meta
    yield* refuseWhileLocked(guesses)
    const device = yield* findDeviceByUserCode(userCode, Date.parse(invocation.at)).pipe(
      Effect.tapError((error) =>
        error._tag === "NotFound" && normalizeUserCode(userCode) !== undefined
          ? countFailure(guesses, { email: null, userId, orgIds: invocation.orgId === null ? [] : [invocation.orgId] }, actor)
          : Effect.void
      )
    )
    yield* admit(guesses, true, actor)
    return device
  })

export const approveDevice = implement(Api.approveDevice, (invocation, input) =>
  Effect.gen(function* () {
    const userId = yield* sessionPerson(invocation)
    const device = yield* findGuarded(invocation, userId, input.userCode)
    const level = input.level ?? "workspace"
    const orgId = invocation.orgId!
    const workspaceId = level === "organization" ? null : invocation.workspaceId
    const host = yield* ActorHost
    yield* host.send(DeviceActor, device.deviceId, new ApproveDevice({ deviceId: device.deviceId, userId, orgId, workspaceId }), invocation.meta)
    return { userCode: device.userCode, clientName: device.clientName, status: "approved" as const, level, orgId, workspaceId }
  })
)

export const denyDevice = implement(Api.denyDevice, (invocation, input) =>
  Effect.gen(function* () {
    const userId = yield* sessionPerson(invocation)
    const device = yield* findGuarded(invocation, userId, input.userCode)
    const host = yield* ActorHost
    yield* host.send(DeviceActor, device.deviceId, new DenyDevice({ deviceId: device.deviceId, userId }), invocation.meta)
    return { userCode: device.userCode, clientName: device.clientName, status: "denied" as const }
  })
)

export const deviceCapabilities: ReadonlyArray<AnyCapability> = [approveDevice, denyDevice]
