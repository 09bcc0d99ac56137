/**
 * A sticky partition assigner for kafkajs's consumer group: each member keeps the partitions it
 * owns as far as a balanced share allows, and only what must move moves. kafkajs's protocol stays
 * eager (every member rejoins at each change), but a member that is told only the difference keeps
 * its writers, caches and projections for the partitions that stay, and goes on deciding there
 * through the rebalance. Each member tells the leader what it owns in its join's user data,
 * encoded as kafkajs's own member assignment.
 */
import kafkajs from "kafkajs"
import type { Assignment, PartitionAssigner } from "kafkajs"

const { AssignerProtocol } = kafkajs

/** The protocol's name in the group; members that do not all support it fall back to the next assigner they share. */
export const STICKY_ASSIGNER = "SvcStickyAssigner"

/** A member of the group and the partitions (of one topic) it says it owns now. */
export interface Claim {
  readonly memberId: string
  readonly owned: ReadonlyArray<number>
}

/**
 * Each member's partitions of a topic: every partition assigned once, shares differing by at most
 * one, and as many partitions as that allows left with the member that claims them. The larger
 * shares go to the members that claim most (then by member id); a partition claimed twice (a member
 * that lost its membership without hearing of it) stays with the first claimant in member-id order,
 * and the writers' fencing settles the rest. Deterministic: the same claims give the same answer.
 */
export const stickyAssignment = (partitions: ReadonlyArray<number>, claims: ReadonlyArray<Claim>): Map<string, Array<number>> => {
  const members = [...claims].sort((x, y) => (x.memberId < y.memberId ? -1 : x.memberId > y.memberId ? 1 : 0))
  const assigned = new Map(members.map((m) => [m.memberId, [] as Array<number>]))
  if (members.length === 0) return assigned
  const exists = new Set(partitions)
  const claimed = new Set<number>()
  const valid = new Map<string, Array<number>>()
  for (const m of members) {
    const mine = [...new Set(m.owned)].filter((p) => exists.has(p) && !claimed.has(p))
    mine.forEach((p) => claimed.add(p))
    valid.set(m.memberId, mine)
  }
  const base = Math.floor(partitions.length / members.length)
  const larger = new Set(
    [...members].sort((x, y) => valid.get(y.memberId)!.length - valid.get(x.memberId)!.length).slice(0, partitions.length % members.length).map((m) => m.memberId)
  )
  const share = (memberId: string) => base + (larger.has(memberId) ? 1 : 0)
  const kept = new Set<number>()
  for (const m of members) {
    const keeps = valid.get(m.memberId)!.slice(0, share(m.memberId))
    assigned.set(m.memberId, keeps)
    keeps.forEach((p) => kept.add(p))
  }
  const free = [...partitions].filter((p) => !kept.has(p)).sort((x, y) => x - y)
  for (const m of members) {
    const mine = assigned.get(m.memberId)!
    while (mine.length < share(m.memberId)) mine.push(free.shift()!)
    mine.sort((x, y) => x - y)
  }
  return assigned
}

/** What a member's join says it owns; nothing if it says nothing readable (it then keeps nothing). */
const claimOf = (memberMetadata: Buffer): Assignment => {
  try {
    const userData = AssignerProtocol.MemberMetadata.decode(memberMetadata)?.userData
    return (userData == null || userData.length === 0 ? undefined : AssignerProtocol.MemberAssignment.decode(userData)?.assignment) ?? {}
  } catch {
    return {}
  }
}

/** The kafkajs assigner; `owned` is what this member owns now, read at each join. */
export const stickyAssigner = (owned: () => Assignment): PartitionAssigner => ({ cluster }) => ({
  name: STICKY_ASSIGNER,
  version: 0,
  assign: async ({ members, topics }) => {
    const claims = members.map(({ memberId, memberMetadata }) => ({ memberId, owned: claimOf(memberMetadata) }))
    const assignments = new Map(members.map(({ memberId }) => [memberId, {} as Assignment]))
    for (const topic of topics) {
      const partitions = cluster.findTopicPartitionMetadata(topic).map((m) => m.partitionId)
      const shares = stickyAssignment(partitions, claims.map(({ memberId, owned }) => ({ memberId, owned: owned[topic] ?? [] })))
      for (const [memberId, mine] of shares) assignments.get(memberId)![topic] = mine
    }
    return [...assignments].map(([memberId, assignment]) => ({
      memberId,
      memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 0, assignment, userData: Buffer.alloc(0) })
    }))
  },
  protocol: ({ topics }) => ({
    name: STICKY_ASSIGNER,
    metadata: AssignerProtocol.MemberMetadata.encode({
      version: 0,
      topics,
      userData: AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: owned(), userData: Buffer.alloc(0) })
    })
  })
})
