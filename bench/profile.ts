/**
 * CPU profiles of a bench's own process (the node it starts), through the inspector, and their top
 * costs by self time: by function, and by place (a package, Node's modules, a directory of the
 * platform, V8 itself).
 */
import { Session } from "node:inspector/promises"
import { findSourceMap } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { table } from "./harness.ts"

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number; readonly columnNumber: number }
  readonly children?: ReadonlyArray<number>
}

export interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

/**
 * A frame as a function name and where it is, and the place its code lives: a package, Node's own
 * modules, a directory of the platform (its `.ts` positions mapped back through tsx's source maps,
 * since tsx writes each module on one line), or V8 itself (the collector, native code).
 */
const frameOf = (frame: ProfileNode["callFrame"]) => {
  const { functionName, url, lineNumber, columnNumber } = frame
  if (url === "") {
    const native = functionName || "(unnamed native)"
    return { name: native, place: native.startsWith("(") ? native : `native ${native}` }
  }
  const name = functionName || "(anonymous)"
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(url)
  if (pkg !== null) return { name: `${name} ${pkg[1]}/${pkg[2]}:${lineNumber + 1}`, place: pkg[1] }
  if (url.startsWith("node:")) return { name: `${name} ${url}:${lineNumber + 1}`, place: "node built-ins" }
  // code not from a file (PGlite's WebAssembly, an eval): named by its URL's scheme
  if (!url.startsWith("file:") && !path.isAbsolute(url)) return { name: `${name} ${url}:${lineNumber + 1}`, place: `${url.split(":")[0]}:` }
  const entry = findSourceMap(url)?.findEntry(lineNumber, columnNumber)
  const original = entry !== undefined && "originalSource" in entry ? entry : undefined
  const source = original?.originalSource ?? url
  const file = path.relative(root, source.startsWith("file:") ? fileURLToPath(source) : source)
  const [top, sub] = file.split(path.sep)
  return { name: `${name} ${file}:${(original?.originalLine ?? lineNumber) + 1}`, place: `platform ${top === "actors" ? `actors/${sub}` : top}/` }
}

/**
 * Self time of the top functions and of each place, as shares of the busy (not idle) samples; for a
 * place also the share of busy samples with it anywhere on the stack. The inspector's own work
 * (stopping the profile) is left out.
 */
export const summarize = (profile: CpuProfile, top = 15) => {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const frames = new Map(profile.nodes.map((n) => [n.id, frameOf(n.callFrame)]))
  /** Each node's places on its stack, itself included; undefined under the inspector. */
  const stacks = new Map<number, ReadonlySet<string> | undefined>()
  const walk = (id: number, above: ReadonlySet<string> | undefined) => {
    const node = byId.get(id)!
    const here = above === undefined || node.callFrame.url === "node:inspector" ? undefined : new Set([...above, frames.get(id)!.place])
    stacks.set(id, here)
    for (const child of node.children ?? []) walk(child, here)
  }
  walk(profile.nodes[0].id, new Set())
  let idle = 0
  let busy = 0
  const byFunction = new Map<string, number>()
  const byPlace = new Map<string, number>()
  const onStack = new Map<string, number>()
  const add = (m: Map<string, number>, key: string, us: number) => m.set(key, (m.get(key) ?? 0) + us)
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]
    const us = profile.timeDeltas[i]
    const stack = stacks.get(id)
    if (stack === undefined) continue
    const { name, place } = frames.get(id)!
    if (name === "(idle)") {
      idle += us
      continue
    }
    busy += us
    add(byFunction, name, us)
    add(byPlace, place, us)
    for (const p of stack) add(onStack, p, us)
  }
  const share = (us: number | undefined) => `${((100 * (us ?? 0)) / busy).toFixed(1)} %`
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1])
  return {
    busyShare: busy / (busy + idle),
    functions: sorted(byFunction).slice(0, top).map(([name, us]) => `| ${name} | ${share(us)} |`),
    places: sorted(byPlace).slice(0, 14).map(([place, us]) => `| ${place} | ${share(us)} | ${place.startsWith("(") ? "" : share(onStack.get(place))} |`)
  }
}



/** An inspector session on this process, profiling between `start` and `stop`. */
export const openProfiler = async () => {
  const session = new Session()
  session.connect()
  await session.post("Profiler.enable")
  return {
    start: () => session.post("Profiler.start"),
    stop: async () => (await session.post("Profiler.stop")).profile as CpuProfile,
    close: () => session.disconnect()
  }
}

/** A profile's summary as Markdown: how busy the main thread was, the places, the top functions. */
export const profileTables = (what: string, profile: CpuProfile) => {
  const { busyShare, functions, places } = summarize(profile)
  return [
    `CPU profile of ${what} (main thread ${(100 * busyShare).toFixed(0)} % busy; shares of the busy time, self time):`,
    "",
    ...table(["place", "self", "on the stack"], "lrr", places),
    "",
    ...table(["function", "self"], "lr", functions)
  ]
}
