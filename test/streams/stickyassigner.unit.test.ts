import { describe, expect, it } from "vitest"
import { type Claim, stickyAssignment } from "../../streams/StickyAssigner.ts"

const twelve = Array.from({ length: 12 }, (_, p) => p)
const shares = (assigned: Map<string, Array<number>>) => Object.fromEntries(assigned)

describe("stickyAssignment", () => {
  const table: ReadonlyArray<{ readonly given: string; readonly partitions: ReadonlyArray<number>; readonly claims: ReadonlyArray<Claim>; readonly then: Record<string, ReadonlyArray<number>> }> = [
    {
      given: "a first member, owning nothing",
      partitions: twelve,
      claims: [{ memberId: "a", owned: [] }],
      then: { a: twelve }
    },
    {
      given: "two new members: the partitions split evenly",
      partitions: twelve,
      claims: [{ memberId: "b", owned: [] }, { memberId: "a", owned: [] }],
      then: { a: [0, 1, 2, 3, 4, 5], b: [6, 7, 8, 9, 10, 11] }
    },
    {
      given: "a third member joins two: each keeps four, the newcomer gets the rest",
      partitions: twelve,
      claims: [{ memberId: "a", owned: [0, 2, 4, 6, 8, 10] }, { memberId: "b", owned: [1, 3, 5, 7, 9, 11] }, { memberId: "c", owned: [] }],
      then: { a: [0, 2, 4, 6], b: [1, 3, 5, 7], c: [8, 9, 10, 11] }
    },
    {
      given: "a member leaves: the others keep theirs and share its partitions",
      partitions: twelve,
      claims: [{ memberId: "a", owned: [0, 2, 4, 6] }, { memberId: "b", owned: [1, 3, 5, 7] }],
      then: { a: [0, 2, 4, 6, 8, 9], b: [1, 3, 5, 7, 10, 11] }
    },
    {
      given: "shares cannot be even: the larger ones go to whoever claims most, then by member id",
      partitions: [0, 1, 2, 3, 4],
      claims: [{ memberId: "a", owned: [0] }, { memberId: "b", owned: [1, 2, 3] }, { memberId: "c", owned: [4] }],
      then: { a: [0, 3], b: [1, 2], c: [4] }
    },
    {
      given: "a partition claimed twice (a member that lost its membership unawares) stays with the first claimant",
      partitions: [0, 1, 2, 3],
      claims: [{ memberId: "b", owned: [1, 2] }, { memberId: "a", owned: [0, 1] }],
      then: { a: [0, 1], b: [2, 3] }
    },
    {
      given: "claims of partitions the topic does not have (it was recreated smaller) are ignored",
      partitions: [0, 1],
      claims: [{ memberId: "a", owned: [0, 5, 7] }, { memberId: "b", owned: [] }],
      then: { a: [0], b: [1] }
    },
    {
      given: "more members than partitions: some get none",
      partitions: [0, 1],
      claims: [{ memberId: "a", owned: [] }, { memberId: "b", owned: [1] }, { memberId: "c", owned: [] }],
      then: { a: [0], b: [1], c: [] }
    }
  ]
  for (const { given, partitions, claims, then } of table) {
    it(given, () => {
      expect(shares(stickyAssignment(partitions, claims))).toEqual(then)
    })
  }

  it("moves no more partitions than balance needs, whatever the claims", () => {
    for (let members = 1; members <= 5; members++) {
      for (let seed = 0; seed < 50; seed++) {
        const claims = Array.from({ length: members }, (_, m) => ({
          memberId: `m${m}`,
          owned: twelve.filter((p) => (p * 7 + seed * 13 + m * 5) % (members + 1) === 0)
        }))
        const assigned = stickyAssignment(twelve, claims)
        const all = [...assigned.values()].flat().sort((x, y) => x - y)
        expect(all).toEqual(twelve)
        const sizes = [...assigned.values()].map((s) => s.length)
        expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1)
        // each member keeps its claims up to its share (claims contested by an earlier member aside)
        const taken = new Set<number>()
        for (const c of [...claims].sort((x, y) => (x.memberId < y.memberId ? -1 : 1))) {
          const own = c.owned.filter((p) => !taken.has(p))
          own.forEach((p) => taken.add(p))
          const kept = assigned.get(c.memberId)!.filter((p) => own.includes(p)).length
          expect(kept).toBe(Math.min(own.length, assigned.get(c.memberId)!.length))
        }
      }
    }
  })
})
