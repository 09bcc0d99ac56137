/**
 * The node's admission of turns and streams (docs/decisions.md, "Admission control"): however many
 * callers and tenants ask, one node holds at most so many assistant turns being started (admitted,
 * their run not yet recorded), turns running, and streams followed. Past a bound the start is
 * refused at once with `Overloaded` (503 `engine_unavailable`, `Retry-After`), before anything is
 * recorded or any stream opens: the node never takes work it would fail later (a start that waits
 * past the command timeout ends `assistant_run_not_recorded`). The per-tenant shares
 * (`FairShares.ts`) are taken after the node's place, and given back with it.
 *
 * The commands queued on the node's partition workers are bounded by the actor host
 * (`streams/Admission.ts`, `maxQueuedCommands`).
 */
import { Context, Effect, Layer } from "effect"
import { Gauge } from "prom-client"
import { type Gate, makeGate, type Release } from "../../streams/Admission.ts"
import { NodeMetrics } from "../../streams/Metrics.ts"
import type { AdmissionConfig } from "./Config.ts"
import { Overloaded } from "./Errors.ts"

/**
 * What a refused caller is told to wait. A start is recorded within a second or so of being
 * admitted, so a place among the starting turns frees soon; a running turn or a stream lasts as
 * long as its model takes, which no one can date: a few seconds keeps refused clients from hammering.
 */
export const RETRY_AFTER_SECONDS: Readonly<Record<Overloaded["bound"], number>> = {
  turns_starting: 1,
  turns_running: 5,
  open_streams: 5
}

/** A turn's places: among the starting turns until its run is recorded (`started`), among the running ones until it ends (`ended`, which gives back both). */
export interface TurnPlace {
  readonly started: Release
  readonly ended: Release
}

export interface NodeAdmissionService {
  readonly limits: AdmissionConfig
  /** The refusal a turn would meet now, taking nothing: a cheap check before a turn's other checks (its reads). */
  readonly wouldRefuseTurn: () => Overloaded | undefined
  /** Takes a place among the starting and the running turns, or the refusal. */
  readonly admitTurn: () => TurnPlace | Overloaded
  /** Takes a place among the streams followed, or the refusal. */
  readonly admitStream: () => Release | Overloaded
  /** The running turns' places, as an approved call's run takes one: now, or waiting its turn; and how many are held (a drain waits for none). */
  readonly runPlaces: Pick<Gate, "tryAcquire" | "waitFor" | "held">
}

export class NodeAdmission extends Context.Tag("svc/NodeAdmission")<NodeAdmission, NodeAdmissionService>() {}

export const makeNodeAdmission = (limits: AdmissionConfig, refused: (bound: Overloaded["bound"]) => void = () => {}): NodeAdmissionService & { readonly gates: ReadonlyArray<Gate> } => {
  const starting = makeGate("turns_starting", limits.maxTurnsStarting)
  const running = makeGate("turns_running", limits.maxTurnsRunning)
  const streams = makeGate("open_streams", limits.maxOpenStreams)
  const refusal = (bound: Overloaded["bound"]) => {
    refused(bound)
    return new Overloaded({ bound, retryAfterSeconds: RETRY_AFTER_SECONDS[bound] })
  }
  const full = (gate: Gate) => gate.held() >= gate.limit
  return {
    limits,
    gates: [starting, running, streams],
    wouldRefuseTurn: () => (full(running) ? refusal("turns_running") : full(starting) ? refusal("turns_starting") : undefined),
    admitTurn: () => {
      const run = running.tryAcquire()
      if (run === undefined) return refusal("turns_running")
      const start = starting.tryAcquire()
      if (start === undefined) {
        run()
        return refusal("turns_starting")
      }
      return {
        started: start,
        ended: () => {
          start()
          run()
        }
      }
    },
    admitStream: () => streams.tryAcquire() ?? refusal("open_streams"),
    runPlaces: running
  }
}

export const layer = (limits: AdmissionConfig): Layer.Layer<NodeAdmission, never, NodeMetrics> =>
  Layer.effect(
    NodeAdmission,
    Effect.map(NodeMetrics, (metrics) => {
      const admission = makeNodeAdmission(limits, (bound) => metrics.admissionRefusals.inc({ bound }))
      new Gauge({
        name: "svc_admission_held",
        help: "Places this node's admission has given out and not had back, by bound (turns starting, turns running, open streams)",
        labelNames: ["bound"],
        registers: [metrics.registry],
        collect() {
          for (const gate of admission.gates) this.set({ bound: gate.bound }, gate.held())
        }
      })
      return admission
    })
  )

const orRefused = <A>(taken: A | Overloaded): Effect.Effect<A, Overloaded> => (taken instanceof Overloaded ? Effect.fail(taken) : Effect.succeed(taken))

/** Refuses a turn the node would refuse now, taking nothing. */
export const checkTurnAdmission = Effect.flatMap(NodeAdmission, (admission) => {
  const refused = admission.wouldRefuseTurn()
  return refused === undefined ? Effect.void : Effect.fail(refused)
})

/** A place for a turn about to start; the turn gives it back (`started`, then `ended`). */
export const admitTurn = Effect.flatMap(NodeAdmission, (admission) => orRefused(admission.admitTurn()))

/** A place among the running turns, as soon as one is free (first come, first served). */
export const awaitRunPlace = Effect.flatMap(NodeAdmission, (admission) =>
  Effect.async<Release>((resume) => {
    const leave = admission.runPlaces.waitFor((release) => resume(Effect.succeed(release)))
    return Effect.sync(leave)
  })
)

/** A place for a stream about to be followed; given back as its last update is out. */
export const admitStream = Effect.flatMap(NodeAdmission, (admission) => orRefused(admission.admitStream()))
