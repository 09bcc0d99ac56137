/**
 * The device actor (`device:<deviceId>`, a CLI device login) as decider specifications: request,
 * approval or denial by a person, one redemption; every decision refused once the code has
 * expired; then the `device_authorizations` rows its projection writes. Also the user code's shape.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { DeviceActor } from "../../actors/device/actor.ts"
import {
  DeviceAlreadyApproved,
  DeviceAlreadyExists,
  DeviceAlreadyRedeemed,
  DeviceCodeExpired,
  DeviceDenied as Denied,
  DeviceNotFound,
  DevicePending
} from "../../actors/device/errors.ts"
import { DeviceApproved, DeviceDenied, DeviceRedeemed, DeviceRequested } from "../../actors/device/events.ts"
import { ApproveDevice, DenyDevice, RedeemDevice, RequestDevice } from "../../actors/device/protocol.ts"
import { DeviceState } from "../../actors/device/state.ts"
import { keyOf } from "../../actors/kernel.ts"
import { newUserCode, normalizeUserCode, PollTracker, USER_CODE_ALPHABET } from "../../src/identity/DeviceLogin.ts"
import { jsonRoundTrip, meta, projectedRows, spec } from "../support/decider.ts"

const T0 = "2024-05-01T12:00:00.000Z"
const T1 = "2024-05-01T12:03:00.000Z"
const T2 = "2024-05-01T12:04:00.000Z"
const EXPIRES = "2024-05-01T12:10:00.000Z"
const LATE = "2024-05-01T12:10:00.001Z"

const deviceId = "dev_1"
const request = { deviceId, userCode: "BCDF-GHJK", deviceLookup: "lookup1", deviceSecretHash: "hash1", clientName: "svc-cli on laptop", expiresAt: EXPIRES }
const carol = { deviceId, userId: "usr_carol", orgId: "org_1", workspaceId: "wsp_1" }

const requested = new DeviceRequested({ ...request, requestedAt: T0 })
const approved = new DeviceApproved({ ...carol, approvedAt: T1 })
const denied = new DeviceDenied({ deviceId, userId: "usr_carol", deniedAt: T1 })
const redeemed = new DeviceRedeemed({ deviceId, keyId: "aky_1", redeemedAt: T2 })

const at = (time: string) => meta({ at: time })

const device = spec(DeviceActor)

describe("request", () => {
  it("opens a pending device login at the command's time", () =>
    device.given([]).when(new RequestDevice(request), at(T0)).then([requested]))

  it("refuses a second request under the same id", () =>
    device.given([requested]).when(new RequestDevice(request), at(T0)).thenThrows(new DeviceAlreadyExists({ deviceId })))
})

describe("approval", () => {
  const table: ReadonlyArray<readonly [string, ReadonlyArray<DeviceApproved | DeviceRequested | DeviceDenied | DeviceRedeemed>, ApproveDevice, string, unknown]> = [
    ["a pending login, for a workspace", [requested], new ApproveDevice(carol), T1, [approved]],
    [
      "a pending login, at organization level",
      [requested],
      new ApproveDevice({ ...carol, workspaceId: null }),
      T1,
      [new DeviceApproved({ ...carol, workspaceId: null, approvedAt: T1 })]
    ],
    ["again by the same person for the same place: nothing", [requested, approved], new ApproveDevice(carol), T2, []],
    ["again by the same person after redemption: nothing", [requested, approved, redeemed], new ApproveDevice(carol), T2, []],
    ["by another person", [requested, approved], new ApproveDevice({ ...carol, userId: "usr_dave" }), T2, new DeviceAlreadyApproved({ deviceId })],
    ["by the same person for another workspace", [requested, approved], new ApproveDevice({ ...carol, workspaceId: "wsp_2" }), T2, new DeviceAlreadyApproved({ deviceId })],
    ["by another person after redemption", [requested, approved, redeemed], new ApproveDevice({ ...carol, userId: "usr_dave" }), T2, new DeviceAlreadyRedeemed({ deviceId })],
    ["a denied login", [requested, denied], new ApproveDevice(carol), T2, new Denied({ deviceId })],
    ["at the moment the code expires", [requested], new ApproveDevice(carol), EXPIRES, new DeviceCodeExpired({ deviceId, expiresAt: EXPIRES })],
    ["after the code expired", [requested], new ApproveDevice(carol), LATE, new DeviceCodeExpired({ deviceId, expiresAt: EXPIRES })],
    ["an unknown login", [], new ApproveDevice(carol), T1, new DeviceNotFound({ deviceId })]
  ]
  for (const [name, given, command, time, outcome] of table) {
    it(name, () => {
      const when = device.given(given).when(command, at(time))
      if (Array.isArray(outcome)) when.then(outcome)
      else when.thenThrows(outcome as never)
    })
  }
})

describe("denial", () => {
  const deny = new DenyDevice({ deviceId, userId: "usr_carol" })
  const table: ReadonlyArray<readonly [string, ReadonlyArray<DeviceApproved | DeviceRequested | DeviceDenied | DeviceRedeemed>, string, unknown]> = [
    ["a pending login", [requested], T1, [denied]],
    ["twice: one denial", [requested, denied], T2, []],
    ["an approved login", [requested, approved], T2, new DeviceAlreadyApproved({ deviceId })],
    ["a redeemed login", [requested, approved, redeemed], T2, new DeviceAlreadyRedeemed({ deviceId })],
    ["after the code expired", [requested], LATE, new DeviceCodeExpired({ deviceId, expiresAt: EXPIRES })],
    ["an unknown login", [], T1, new DeviceNotFound({ deviceId })]
  ]
  for (const [name, given, time, outcome] of table) {
    it(name, () => {
      const when = device.given(given).when(deny, at(time))
      if (Array.isArray(outcome)) when.then(outcome)
      else when.thenThrows(outcome as never)
    })
  }
})

describe("redemption", () => {
  const redeem = new RedeemDevice({ deviceId, keyId: "aky_1" })
  const table: ReadonlyArray<readonly [string, ReadonlyArray<DeviceApproved | DeviceRequested | DeviceDenied | DeviceRedeemed>, RedeemDevice, string, unknown]> = [
    ["an approved login, once", [requested, approved], redeem, T2, [redeemed]],
    ["twice, even with the same key", [requested, approved, redeemed], redeem, T2, new DeviceAlreadyRedeemed({ deviceId })],
    ["twice, with another key", [requested, approved, redeemed], new RedeemDevice({ deviceId, keyId: "aky_2" }), T2, new DeviceAlreadyRedeemed({ deviceId })],
    ["before approval", [requested], redeem, T1, new DevicePending({ deviceId })],
    ["after denial", [requested, denied], redeem, T2, new Denied({ deviceId })],
    ["an approved login after the code expired", [requested, approved], redeem, LATE, new DeviceCodeExpired({ deviceId, expiresAt: EXPIRES })],
    ["a pending login after the code expired", [requested], redeem, LATE, new DeviceCodeExpired({ deviceId, expiresAt: EXPIRES })],
    ["a redeemed login after the code expired: still redeemed", [requested, approved, redeemed], redeem, LATE, new DeviceAlreadyRedeemed({ deviceId })],
    ["an unknown login", [], redeem, T1, new DeviceNotFound({ deviceId })]
  ]
  for (const [name, given, command, time, outcome] of table) {
    it(name, () => {
      const when = device.given(given).when(command, at(time))
      if (Array.isArray(outcome)) when.then(outcome)
      else when.thenThrows(outcome as never)
    })
  }
})

describe("evolve", () => {
  it("refuses a log that approves a login twice", () => {
    const state = [requested, approved].reduce(DeviceActor.evolve, DeviceActor.initialState)
    expect(() => DeviceActor.evolve(state, approved)).toThrow(/device.approved/)
  })

  it.effect("every state survives the trip through JSON (the actor_state read model)", () =>
    Effect.gen(function* () {
      for (const history of [[requested], [requested, approved], [requested, denied], [requested, approved, redeemed]]) {
        const state = history.reduce(DeviceActor.evolve, DeviceActor.initialState)
        expect(yield* jsonRoundTrip(DeviceState, state)).toEqual(state)
      }
    })
  )
})

describe("projection into device_authorizations", () => {
  const key = keyOf(DeviceActor, deviceId)
  const base = {
    device_id: deviceId,
    user_code: "BCDF-GHJK",
    device_lookup: "lookup1",
    device_secret_hash: "hash1",
    client_name: "svc-cli on laptop",
    created_at: T0,
    expires_at: EXPIRES
  }

  it("a pending login: no person, no key", () =>
    expect(projectedRows(DeviceActor, key, [[requested, T0]])).toEqual({
      device_authorizations: [{ ...base, status: "pending", org_id: null, workspace_id: null, user_id: null, key_id: null, decided_at: null, redeemed_at: null }]
    }))

  it("a redeemed login: the approver, the place and the key", () =>
    expect(projectedRows(DeviceActor, key, [[requested, T0], [approved, T1], [redeemed, T2]])).toEqual({
      device_authorizations: [
        { ...base, status: "redeemed", org_id: "org_1", workspace_id: "wsp_1", user_id: "usr_carol", key_id: "aky_1", decided_at: T1, redeemed_at: T2 }
      ]
    }))

  it("an organization-level approval has no workspace", () =>
    expect(projectedRows(DeviceActor, key, [[requested, T0], [new DeviceApproved({ ...carol, workspaceId: null, approvedAt: T1 }), T1]])).toEqual({
      device_authorizations: [
        { ...base, status: "approved", org_id: "org_1", workspace_id: null, user_id: "usr_carol", key_id: null, decided_at: T1, redeemed_at: null }
      ]
    }))

  it("a denied login: who denied it, and when", () =>
    expect(projectedRows(DeviceActor, key, [[requested, T0], [denied, T1]])).toEqual({
      device_authorizations: [{ ...base, status: "denied", org_id: null, workspace_id: null, user_id: "usr_carol", key_id: null, decided_at: T1, redeemed_at: null }]
    }))
})

describe("user codes", () => {
  it("are eight characters of the unambiguous alphabet, shown as XXXX-XXXX", () => {
    for (let i = 0; i < 200; i++) {
      const code = newUserCode()
      expect(code).toMatch(/^[A-Z]{4}-[A-Z]{4}$/)
      for (const c of code.replace("-", "")) expect(USER_CODE_ALPHABET).toContain(c)
    }
    expect(USER_CODE_ALPHABET).not.toMatch(/[AEIOUY0-9]/)
  })

  it("are read whatever the case, spaces and dashes", () => {
    expect(normalizeUserCode("bcdf-ghjk")).toBe("BCDF-GHJK")
    expect(normalizeUserCode(" BCDF GHJK ")).toBe("BCDF-GHJK")
    expect(normalizeUserCode("BCDFGHJK")).toBe("BCDF-GHJK")
    expect(normalizeUserCode("BCDF-GHJ")).toBeUndefined()
    expect(normalizeUserCode("ABCD-EFGH")).toBeUndefined()
    expect(normalizeUserCode("BCDF-GHJKL")).toBeUndefined()
  })
})

describe("poll tracker (slow_down)", () => {
  it("flags a poll sooner than five seconds after the last, and forgets expired devices", () => {
    const polls = new PollTracker()
    expect(polls.tooSoon("dev_a", 0, 600_000)).toBe(false)
    expect(polls.tooSoon("dev_a", 4_999, 600_000)).toBe(true)
    expect(polls.tooSoon("dev_a", 10_000, 600_000)).toBe(false)
    expect(polls.tooSoon("dev_b", 10_000, 20_000)).toBe(false)
    polls.sweep(20_000)
    expect(polls.size).toBe(1)
    polls.forget("dev_a")
    expect(polls.size).toBe(0)
  })
})
