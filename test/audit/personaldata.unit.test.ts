/** Sealing a person's words and opening them (src/audit/PersonalData.ts), and the declared places (actors/personal.ts). */
import { randomBytes } from "node:crypto"
import { describe, expect, it } from "vitest"
import type { Json } from "../../actors/kernel.ts"
import { personalValues, valuesAt } from "../../actors/personal.ts"
import { openerFor, sealedKeyRef, sealedWithin, sealerFor } from "../../src/audit/PersonalData.ts"

const keyRef = `pk_${"a".repeat(32)}`
const key = randomBytes(32)

describe("sealed words", () => {
  it("open with their person's key, to the same text and JSON", () => {
    const sealer = sealerFor(keyRef, key)
    const sealed = sealer.seal("my address is 1 Rue X")
    expect(sealed).not.toContain("Rue")
    expect(sealedKeyRef(sealed)).toBe(keyRef)
    const open = openerFor(new Map([[keyRef, key]]))
    expect(open.text(sealed)).toBe("my address is 1 Rue X")
    expect(open.json(sealer.sealJson({ type: "text", text: "hi" }))).toEqual({ type: "text", text: "hi" })
  })

  it("open to null once the key is gone, or under another key", () => {
    const sealed = sealerFor(keyRef, key).seal("gone")
    expect(openerFor(new Map()).text(sealed)).toBeNull()
    expect(openerFor(new Map([[keyRef, randomBytes(32)]])).text(sealed)).toBeNull()
    expect(openerFor(new Map()).json(sealerFor(keyRef, key).sealJson({ a: 1 }))).toBeNull()
  })

  it("open within a text that quotes them, and are left out of it once erased", () => {
    const sealed = sealerFor(keyRef, key).sealJson({ nodeId: "n1" })
    const notice = `node.delete ${sealed}`
    expect(sealedWithin(notice)).toEqual([sealed])
    expect(openerFor(new Map([[keyRef, key]])).within(notice)).toBe('node.delete {"nodeId":"n1"}')
    expect(openerFor(new Map()).within(notice)).toBe("node.delete")
    expect(openerFor(new Map()).within(" in clear, pd1.x ")).toBe(" in clear, pd1.x ")
  })

  it("written before sealing, in clear, read as they are", () => {
    const open = openerFor(new Map())
    expect(open.text("pd1. not sealed")).toBe("pd1. not sealed")
    expect(open.json({ type: "text", text: "hi" })).toEqual({ type: "text", text: "hi" })
    expect(sealedKeyRef("hello")).toBeUndefined()
  })
})

describe("the declared places", () => {
  it("find members, members of members, and each element of an array", () => {
    expect(valuesAt({ reply: "r", result: { reply: "x" } }, "result.reply")).toEqual(["x"])
    expect(valuesAt({ events: [{ seq: 1, event: { a: 1 } }, { seq: 2, event: "s" }] }, "events[].event")).toEqual([{ a: 1 }, "s"])
    expect(valuesAt({ result: null }, "result.reply")).toEqual([])
    expect(personalValues("run.finished", { reply: "r", result: { reply: "x" } })).toEqual(["r", "x"])
    expect(personalValues("run.started", { userId: "u" })).toEqual([])
    // a step's failure message, not its code
    expect(personalValues("automation_run.step_failed", { error: { code: "not_found", message: "sealed" } })).toEqual(["sealed"])
    // a question's options, each; repeated in its answer
    expect(personalValues("question.answered", { answer: "a", asked: { question: "q", options: ["o1", "o2"] } })).toEqual(["a", "q", "o1", "o2"])
    // `*`: each member of an object (an A2A data part's members)
    const submitted: Json = { message: { parts: [{ kind: "text", text: "t" }, { kind: "data", data: { a: 1, b: "x" } }, { kind: "file", file: { uri: "u" } }] } }
    expect(personalValues("a2a.task.submitted", submitted)).toEqual(["t", 1, "x"])
    // `a|b`: a step's output sealed whole, or a `human_input` step's answer inside it
    expect(personalValues("automation_run.step_succeeded", { output: "sealed" })).toEqual(["sealed"])
    expect(personalValues("automation_run.step_succeeded", { output: { response: "sealed", respondent: "usr_a" } })).toEqual(["sealed"])
  })
})
