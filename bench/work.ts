/**
 * `npm run bench:work`: the work per operation, counted (`counting.ts`). Starts a node as the other
 * benches do and sends each of the four operations `BENCH_WORK_OPERATIONS` times (default 50), one
 * at a time, then `BENCH_CONCURRENCY` (default 16) at a time, where batching shows; prints a table
 * of each. `BENCH_WORK_STATEMENTS=1` adds each operation's statements by their text, on stderr;
 * `BENCH_PROFILE=1` a CPU profile of each operation's count.
 */
import { a2aGet, a2aSend, chatTurn, countWork, idleLoad, nodeCreate, type Operation, type Work, workTable } from "./counting.ts"
import { type Bench, database, machine, runBench, startNode } from "./harness.ts"
import { openProfiler, profileTables } from "./profile.ts"

const OPERATIONS = Number(process.env.BENCH_WORK_OPERATIONS ?? 50)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16)
const PROFILE = process.env.BENCH_PROFILE !== undefined && process.env.BENCH_PROFILE !== ""

const bench = async (context: Bench) => {
  // counting statements costs the node a stack trace each: the CPU column includes it
  const node = await startNode(context, { unlimitedChat: true, overrides: { dbStatementCounts: true } })
  // one of each first: the first of a kind warms caches the rest find warm
  const operations: ReadonlyArray<readonly [string, Operation]> = [
    ["`message/send`", a2aSend(node)],
    ["`tasks/get`", await a2aGet(node)],
    ["chat turn", chatTurn(node)],
    ["`node.create`", await nodeCreate(node)]
  ]
  for (const [what, operation] of operations) {
    const failure = await operation()
    if (failure !== undefined) throw new Error(`${what}: ${failure}`)
  }
  const tables: string[] = []
  const profiles: string[] = []
  const profiler = PROFILE ? await openProfiler() : undefined
  for (const concurrency of [1, CONCURRENCY]) {
    const works: Work[] = []
    for (const [what, operation] of operations) {
      await profiler?.start()
      works.push(await countWork(node, what, operation, OPERATIONS, concurrency))
      if (profiler !== undefined) profiles.push("", ...profileTables(`${what}, ${concurrency} in flight`, await profiler.stop()))
    }
    tables.push("", `${concurrency === 1 ? "One at a time" : `${concurrency} in flight`}:`, "", ...workTable(works))
  }
  profiler?.close()
  console.log([
    `${machine(node.log.mode)}; offline model; ${OPERATIONS} of each operation; per operation.`,
    "",
    await idleLoad(node),
    ...tables,
    "",
    database === "PGlite" ? "PGlite has one connection: both pools' statements are counted together." : "",
    ...profiles
  ].join("\n"))
}

runBench(import.meta.url, { bench, load: async () => undefined })
