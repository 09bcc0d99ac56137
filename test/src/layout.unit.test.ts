/**
 * The house rules of docs/architecture.md, read from the code as it is: who imports whom, no
 * import loop, nothing loose in src/, SQL only in streams/ and the wings' Queries.ts, and no
 * function over 150 lines in the backend.
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const ROOT = path.resolve(import.meta.dirname, "../..")
const backend = execFileSync("git", ["ls-files", "src", "streams", "actors", "gateway", "bin"], { cwd: ROOT, encoding: "utf8" })
  .split("\n")
  .filter((file) => file.endsWith(".ts"))
const sourceOf = new Map(backend.map((file) => [file, readFileSync(path.join(ROOT, file), "utf8")]))

const IMPORT = /(?:from\s+|import\s*\(\s*|import\s+)(["'])(\.{1,2}\/[^"']+)\1/g
const importsOf = (file: string): ReadonlyArray<string> =>
  [...sourceOf.get(file)!.matchAll(IMPORT)].map((m) => path.posix.normalize(path.posix.join(path.posix.dirname(file), m[2]!)))
const roomOf = (file: string) => file.split("/")[0]!

describe("the rooms", () => {
  it("the gateway imports src/ only; streams/ and actors/ import nothing above them; src/ imports neither gateway/ nor bin/", () => {
    const forbidden: Record<string, ReadonlyArray<string>> = {
      gateway: ["streams", "actors", "bin"],
      streams: ["src", "gateway", "bin"],
      actors: ["src", "gateway", "bin", "streams"],
      src: ["gateway", "bin"]
    }
    const arrows = backend.flatMap((file) =>
      importsOf(file).filter((target) => forbidden[roomOf(file)]?.includes(roomOf(target))).map((target) => `${file} -> ${target}`)
    )
    expect(arrows).toEqual([])
  })

  it("has no import loop", () => {
    // Tarjan's strongly connected components over the backend's imports
    const edges = new Map(backend.map((file) => [file, importsOf(file).filter((target) => sourceOf.has(target))]))
    const index = new Map<string, number>()
    const low = new Map<string, number>()
    const stack: Array<string> = []
    const onStack = new Set<string>()
    const loops: Array<Array<string>> = []
    let next = 0
    const visit = (v: string): void => {
      index.set(v, next)
      low.set(v, next++)
      stack.push(v)
      onStack.add(v)
      for (const w of edges.get(v)!) {
        if (!index.has(w)) {
          visit(w)
          low.set(v, Math.min(low.get(v)!, low.get(w)!))
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
      }
      if (low.get(v) === index.get(v)) {
        const component: Array<string> = []
        let w: string
        do {
          w = stack.pop()!
          onStack.delete(w)
          component.push(w)
        } while (w !== v)
        if (component.length > 1) loops.push(component)
      }
    }
    for (const file of backend) if (!index.has(file)) visit(file)
    expect(loops).toEqual([])
  })

  it("keeps every file of src/ in a wing, the checkpoint or the shared folder", () => {
    expect(backend.filter((file) => file.startsWith("src/") && file.split("/").length === 2)).toEqual([])
  })

  it("writes SQL only in streams/ and the wings' Queries.ts", () => {
    const withSql = backend.filter((file) => /sql`|sql<|\.unsafe\(/.test(sourceOf.get(file)!))
    expect(withSql.filter((file) => !file.startsWith("streams/") && !file.endsWith("/Queries.ts"))).toEqual([])
  })

  it("has no function longer than 150 lines", () => {
    const long: Array<string> = []
    for (const file of backend) {
      const source = ts.createSourceFile(file, sourceOf.get(file)!, ts.ScriptTarget.Latest, true)
      const visit = (node: ts.Node): void => {
        if (ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isArrowFunction(node) || ts.isMethodDeclaration(node)) {
          const lines = source.getLineAndCharacterOfPosition(node.getEnd()).line - source.getLineAndCharacterOfPosition(node.getStart()).line + 1
          if (lines > 150) long.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} (${lines} lines)`)
        }
        ts.forEachChild(node, visit)
      }
      visit(source)
    }
    expect(long).toEqual([])
  })
})
