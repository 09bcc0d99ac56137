/**
 * Who is signed in (`account.get`) and what they may do in the current workspace (`access.get`):
 * pages and navigation entries a person's roles do not allow are not shown (spec 5 rule 12), and
 * the server refuses them anyway.
 */
import { useQuery, useQueryClient } from "@tanstack/react-query"
import { ApiError, invoke, invokeOwn, type Place, request } from "./api.ts"
import { navigate } from "./router.tsx"

export interface WorkspaceMembership {
  readonly workspaceId: string
  readonly slug: string
  readonly name: string
  readonly role: string | null
}

export interface OrgMembership {
  readonly orgId: string
  readonly slug: string
  readonly name: string
  readonly role: string | null
  readonly workspaces: ReadonlyArray<WorkspaceMembership>
}

export interface Account {
  readonly userId: string
  readonly email: string
  readonly name: string | null
  readonly mfaEnabled: boolean
  readonly memberships: ReadonlyArray<OrgMembership>
}

export interface Access {
  readonly capabilities: ReadonlyArray<string>
  readonly workspaceRole: string | null
  readonly orgRole: string | null
}

export const ACCOUNT_KEY = ["account"] as const

/** The signed-in person; `data` is null when nobody is signed in (401). */
export const useAccount = () =>
  useQuery({
    queryKey: ACCOUNT_KEY,
    queryFn: async (): Promise<Account | null> => {
      try {
        return await invokeOwn<Account>("account.get")
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) return null
        throw error
      }
    },
    staleTime: 60_000,
    retry: false
  })

/** What the person may invoke in `place`; `can(name)` is false until it is known. */
export const useAccess = (place: Place | undefined) => {
  const query = useQuery({
    queryKey: ["access", place?.org, place?.ws],
    queryFn: () => invoke<Access>(place!, "access.get"),
    enabled: place !== undefined,
    staleTime: 60_000,
    retry: false
  })
  const allowed = new Set(query.data?.capabilities ?? [])
  return { ...query, can: (capability: string) => allowed.has(capability) }
}

/** The first workspace the person can enter, for `/` and after sign-in. */
export const homeOf = (account: Account): string | undefined => {
  for (const org of account.memberships) {
    const ws = org.workspaces[0]
    if (ws !== undefined) return `/${encodeURIComponent(org.slug)}/${encodeURIComponent(ws.slug)}/chat`
  }
  return undefined
}

export const useSignOut = () => {
  const client = useQueryClient()
  return async () => {
    await request("/v1/auth/sign-out").catch(() => undefined)
    client.clear()
    navigate("/sign-in")
  }
}
