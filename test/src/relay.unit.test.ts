import { describe, expect, it } from "vitest"
import { Relay } from "../../src/platform/Relay.ts"

const recorder = () => {
  const heard: Array<string> = []
  return { heard, listener: { event: (e: string) => void heard.push(e), done: (o: string) => void heard.push(`done:${o}`) } }
}

describe("a started process's relay", () => {
  it("hands a late listener what was held, then each update as it comes, and the end once", () => {
    const relay = new Relay<string, string>()
    relay.event("a")
    relay.event("b")
    const { heard, listener } = recorder()
    relay.listen(listener)
    relay.event("c")
    relay.done("ok")
    relay.event("after the end")
    relay.done("again")
    expect(heard).toEqual(["a", "b", "c", "done:ok"])
  })

  it("a process that ended before anyone listened is heard whole", () => {
    const relay = new Relay<string, string>()
    relay.event("a")
    relay.done("failed")
    const { heard, listener } = recorder()
    relay.listen(listener)
    expect(heard).toEqual(["a", "done:failed"])
  })

  it("has one listener", () => {
    const relay = new Relay<string, string>()
    relay.listen(recorder().listener)
    expect(() => relay.listen(recorder().listener)).toThrow()
  })
})
