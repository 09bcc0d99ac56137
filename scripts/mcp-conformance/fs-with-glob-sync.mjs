// `fs` with Node 22's `globSync`, for the MCP conformance suite on Node 20 (see node20.mjs).
import fs from "node:fs"
import { globSync as glob } from "glob"

export * from "node:fs"
export default fs
export const globSync = (pattern, options) => glob(pattern, options)
