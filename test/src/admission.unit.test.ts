/**
 * Admission on its own (streams/Admission.ts, src/platform/Admission.ts): a gate gives out at most
 * its limit of places and takes each back once, however often its release is called; a turn takes
 * a place among the running and the starting turns and gives the starting one back first; each
 * refusal names its bound and the seconds to wait, and is counted; a followed relay holds a place
 * among the streams until its last update, and gives it back if the tenant's share is refused.
 */
import { Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { makeGate, type Release } from "../../streams/Admission.ts"
import type { Invocation } from "../../src/checkpoint/Capability.ts"
import { makeNodeAdmission, NodeAdmission, RETRY_AFTER_SECONDS, type TurnPlace } from "../../src/platform/Admission.ts"
import { Overloaded } from "../../src/platform/Errors.ts"
import { FairShares, followedRelay, makeFairShares } from "../../src/platform/FairShares.ts"

describe("a gate", () => {
  const steps: ReadonlyArray<{ readonly name: string; readonly limit: number; readonly run: (gate: ReturnType<typeof makeGate>) => ReadonlyArray<number | "refused"> }> = [
    {
      name: "gives out its limit of places, then refuses",
      limit: 2,
      run: (gate) => [1, 2, 3].map(() => (gate.tryAcquire() === undefined ? "refused" : gate.held()))
    },
    {
      name: "a place given back is free again",
      limit: 1,
      run: (gate) => {
        const first = gate.tryAcquire()!
        const refused = gate.tryAcquire() === undefined ? "refused" : gate.held()
        first()
        const again = gate.tryAcquire() === undefined ? "refused" : gate.held()
        return [refused, again]
      }
    },
    {
      name: "a place given back twice is freed once",
      limit: 2,
      run: (gate) => {
        const first = gate.tryAcquire()!
        gate.tryAcquire()
        first()
        first()
        const held = gate.held()
        gate.tryAcquire()
        return [held, gate.tryAcquire() === undefined ? "refused" : gate.held()]
      }
    },
    {
      name: "every place back, the gate is empty",
      limit: 3,
      run: (gate) => {
        const releases: Array<Release> = []
        for (let i = 0; i < 5; i++) {
          const release = gate.tryAcquire()
          if (release !== undefined) releases.push(release)
        }
        const full = gate.held()
        for (const release of releases) release()
        return [full, gate.held()]
      }
    }
  ]
  const expected: Record<string, ReadonlyArray<number | "refused">> = {
    "gives out its limit of places, then refuses": [1, 2, "refused"],
    "a place given back is free again": ["refused", 1],
    "a place given back twice is freed once": [1, "refused"],
    "every place back, the gate is empty": [3, 0]
  }
  for (const { name, limit, run } of steps) it(name, () => expect(run(makeGate("open_streams", limit))).toEqual(expected[name]))

  it("a waiter gets a place given back, first come first served, ahead of a later try; one that left gets none", () => {
    const gate = makeGate("turns_running", 1)
    const taken: Array<string> = []
    const holder = gate.tryAcquire()!
    const releases: Record<string, Release> = {}
    const wait = (name: string) => gate.waitFor((release) => (taken.push(name), (releases[name] = release)))
    wait("first")
    const leave = wait("second")
    wait("third")
    leave()
    holder()
    const tried = gate.tryAcquire() === undefined ? "refused" : "taken"
    releases.first()
    releases.third()
    expect({ taken, tried, held: gate.held() }).toEqual({ taken: ["first", "third"], tried: "refused", held: 0 })
    // a free place is taken at once
    wait("fourth")
    expect({ taken: taken.at(-1), held: gate.held() }).toEqual({ taken: "fourth", held: 1 })
  })

  it("refuses a bound that is not a positive integer", () => {
    for (const limit of [0, -1, 1.5, Number.NaN]) expect(() => makeGate("turns_running", limit)).toThrow(/turns_running/)
  })
})

describe("the node's admission of turns and streams", () => {
  const admission = (limits: Partial<Parameters<typeof makeNodeAdmission>[0]> = {}) => {
    const refusals: Array<string> = []
    const service = makeNodeAdmission(
      { maxTurnsStarting: 2, maxTurnsRunning: 3, maxOpenStreams: 2, maxQueuedCommands: 10, ...limits },
      (bound) => refusals.push(bound)
    )
    return { service, refusals }
  }
  const place = (taken: TurnPlace | Overloaded): TurnPlace => {
    if (taken instanceof Overloaded) throw new Error(`refused: ${taken.bound}`)
    return taken
  }

  it("turns: the starting bound refuses while starts are under way; a recorded start frees its place there, not among the running", () => {
    const { service, refusals } = admission()
    const a = place(service.admitTurn())
    const b = place(service.admitTurn())
    const refused = service.admitTurn()
    expect(refused).toBeInstanceOf(Overloaded)
    expect(refused).toMatchObject({ bound: "turns_starting", retryAfterSeconds: RETRY_AFTER_SECONDS.turns_starting })
    a.started()
    const c = place(service.admitTurn())
    c.started()
    b.started()
    // three running: the running bound refuses now
    expect(service.admitTurn()).toMatchObject({ _tag: "Overloaded", bound: "turns_running", retryAfterSeconds: RETRY_AFTER_SECONDS.turns_running })
    expect(service.wouldRefuseTurn()).toMatchObject({ bound: "turns_running" })
    a.ended()
    a.ended()
    expect(service.wouldRefuseTurn()).toBeUndefined()
    place(service.admitTurn())
    expect(refusals).toEqual(["turns_starting", "turns_running", "turns_running"])
  })

  it("a turn that ends before its start is recorded gives back both places", () => {
    const { service } = admission({ maxTurnsStarting: 1, maxTurnsRunning: 1 })
    const a = place(service.admitTurn())
    expect(service.admitTurn()).toMatchObject({ bound: "turns_running" })
    a.ended()
    const b = place(service.admitTurn())
    b.started()
    b.ended()
    b.started()
    place(service.admitTurn())
  })

  it("a turn refused by the starting bound keeps no place among the running", () => {
    const { service } = admission({ maxTurnsStarting: 1, maxTurnsRunning: 2 })
    const a = place(service.admitTurn())
    expect(service.admitTurn()).toMatchObject({ bound: "turns_starting" })
    a.started()
    // one running, one place left among the running: the refused turn did not keep one
    place(service.admitTurn()).started()
    expect(service.admitTurn()).toMatchObject({ bound: "turns_running" })
  })

  it("streams have a bound of their own", () => {
    const { service, refusals } = admission()
    const first = service.admitStream()
    service.admitStream()
    expect(service.admitStream()).toMatchObject({ _tag: "Overloaded", bound: "open_streams", retryAfterSeconds: RETRY_AFTER_SECONDS.open_streams })
    // turns are untouched by streams
    place(service.admitTurn())
    ;(first as Release)()
    expect(service.admitStream()).not.toBeInstanceOf(Overloaded)
    expect(refusals).toEqual(["open_streams"])
  })

  it("the refusal says what was full and when to retry", () => {
    expect(new Overloaded({ bound: "turns_running", retryAfterSeconds: 5 }).message).toBe("this node runs as many assistant turns as it may at once; retry in 5 s")
  })
})

describe("a followed relay holds a place among the node's streams", () => {
  const invocation = { principal: { apiKeyId: "aky_1", sessionId: null, attributedTo: "usr_1" }, workspaceId: "wsp_a" } as unknown as Invocation
  const follow = (admission: ReturnType<typeof makeNodeAdmission>, shares: ReturnType<typeof makeFairShares>) =>
    Effect.runSync(
      followedRelay<string, void>(invocation).pipe(
        Effect.provideService(NodeAdmission, admission),
        Effect.provideService(FairShares, shares),
        Effect.either
      )
    )
  const streamsHeld = (admission: ReturnType<typeof makeNodeAdmission>) => admission.gates.find((gate) => gate.bound === "open_streams")!.held()

  it("until its last update; past the node's bound the next is Overloaded, and a refused share gives the node's place back", () => {
    const admission = makeNodeAdmission({ maxTurnsStarting: 1, maxTurnsRunning: 1, maxOpenStreams: 2, maxQueuedCommands: 1 })
    const shares = makeFairShares({ streamsPerKey: 1, streamsPerWorkspace: 10, turnsPerKey: 1, turnsPerWorkspace: 1, enabledSchedulesPerWorkspace: 1 })
    const first = follow(admission, shares)
    if (Either.isLeft(first)) throw new Error("the first stream was refused")
    expect(streamsHeld(admission)).toBe(1)
    // the key's share is taken: refused 429, and the node's place it took is back
    expect(follow(admission, shares)).toMatchObject({ left: { _tag: "RateLimited", limit: "streams_per_key" } })
    expect(streamsHeld(admission)).toBe(1)
    first.right.done()
    first.right.done()
    expect(streamsHeld(admission)).toBe(0)

    const roomy = makeFairShares({ streamsPerKey: 10, streamsPerWorkspace: 10, turnsPerKey: 1, turnsPerWorkspace: 1, enabledSchedulesPerWorkspace: 1 })
    follow(admission, roomy)
    follow(admission, roomy)
    expect(follow(admission, roomy)).toMatchObject({ left: { _tag: "Overloaded", bound: "open_streams" } })
  })
})
