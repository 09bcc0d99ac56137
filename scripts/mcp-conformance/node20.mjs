// `node --import ./node20.mjs`: the MCP conformance suite imports `globSync` from `fs`, which Node 20
// lacks; this resolve hook hands that package (and only it) an `fs` that has it.
import { register } from "node:module"

const shim = new URL("./fs-with-glob-sync.mjs", import.meta.url).href
register(
  "data:text/javascript," +
    encodeURIComponent(`
export async function resolve(specifier, context, next) {
  const fromSuite = context.parentURL !== undefined && context.parentURL.includes("/@modelcontextprotocol/conformance/")
  if (fromSuite && (specifier === "fs" || specifier === "node:fs")) return { url: ${JSON.stringify(shim)}, shortCircuit: true }
  return next(specifier, context)
}`)
)
