/**
 * The app's routes. Workspace pages live under `/{org}/{ws}/...` so every page is a link a person
 * can share or follow from a notification (spec 6.3.5); `/sign-in` and `/device` stand alone.
 */
import { type ComponentType, lazy, Suspense } from "react"
import type { Place } from "./api.ts"
import { Layout } from "./Layout.tsx"
import { matchPath, Redirect, useLocation } from "./router.tsx"
import { homeOf, useAccount } from "./session.tsx"
import { ErrorNote, Loading } from "./ui.tsx"
import { ApprovalsPage } from "./pages/Approvals.tsx"
import { AuditPage } from "./pages/Audit.tsx"
import { AutomationPage, AutomationsPage, NewAutomationPage } from "./pages/Automations.tsx"
import { BillingPage } from "./pages/Billing.tsx"
import { ChatPage } from "./pages/Chat.tsx"
import { DevicePage } from "./pages/Device.tsx"
import { IntegrationsPage, ReauthPage } from "./pages/Integrations.tsx"
import { KeysPage } from "./pages/Keys.tsx"
import { MarketplacePage, ServerPage } from "./pages/Marketplace.tsx"
import { NotificationsPage } from "./pages/Notifications.tsx"
import { SecurityPage } from "./pages/Security.tsx"
import { SignInPage } from "./pages/SignIn.tsx"

export interface PageProps {
  readonly place: Place
  readonly params: Readonly<Record<string, string>>
}

// the chart library comes with the Cluster page only, not in every first load
const LazyClusterPage = lazy(() => import("./pages/Cluster.tsx").then((module) => ({ default: module.ClusterPage })))
const ClusterPage = (props: PageProps) => (
  <Suspense fallback={<Loading what="the cluster page" />}>
    <LazyClusterPage {...props} />
  </Suspense>
)

/** Workspace pages, by the path after `/{org}/{ws}`. */
const PAGES: ReadonlyArray<readonly [string, ComponentType<PageProps>]> = [
  ["/chat", ChatPage],
  ["/chat/:conversationId", ChatPage],
  ["/approvals", ApprovalsPage],
  ["/automations", AutomationsPage],
  ["/automations/new", NewAutomationPage],
  ["/automations/:automationId", AutomationPage],
  ["/automations/:automationId/runs/:runId", AutomationPage],
  ["/marketplace", MarketplacePage],
  ["/marketplace/:serverId", ServerPage],
  ["/notifications", NotificationsPage],
  ["/settings/keys", KeysPage],
  ["/settings/integrations", IntegrationsPage],
  ["/settings/integrations/reauth/:listing", ReauthPage],
  ["/settings/security", SecurityPage],
  ["/audit", AuditPage],
  ["/cluster", ClusterPage],
  ["/billing", BillingPage]
]

const WORKSPACE_PATH = /^\/([^/?]+)\/([^/?]+)(\/[^?]*)?/

export const App = () => {
  const location = useLocation()
  const account = useAccount()
  const path = location.split("?")[0]

  if (path === "/sign-in") return <SignInPage />
  if (account.isPending) return <Loading what="your account" />
  if (account.isError) return <ErrorNote error={account.error} title="Your account could not be loaded" />
  if (account.data === null) return <Redirect to={`/sign-in?next=${encodeURIComponent(location)}`} />
  if (path === "/device") return <Layout place={undefined}><DevicePage account={account.data} /></Layout>

  const match = WORKSPACE_PATH.exec(path)
  if (match === null || match[3] === undefined || match[3] === "/") {
    const home = match === null ? homeOf(account.data) : `/${match[1]}/${match[2]}/chat`
    return home === undefined ? (
      <Layout place={undefined}>
        <p>You are not a member of any workspace yet. Ask an owner of your organization to add you.</p>
      </Layout>
    ) : (
      <Redirect to={home} />
    )
  }
  let place: Place
  try {
    place = { org: decodeURIComponent(match[1]), ws: decodeURIComponent(match[2]) }
  } catch {
    return <ErrorNote error={new Error("this address is not valid")} />
  }
  for (const [pattern, Page] of PAGES) {
    const params = matchPath(pattern, match[3])
    if (params !== undefined) {
      return (
        <Layout place={place}>
          {/* keyed by the component, so one routed under two patterns (the chat: /chat, then
              /chat/cnv_… once its first turn made the conversation) keeps its state across them */}
          <Page key={PAGES.findIndex((entry) => entry[1] === Page)} place={place} params={params} />
        </Layout>
      )
    }
  }
  return (
    <Layout place={place}>
      <h1>Page not found</h1>
      <p>There is no page at {path}. Use the navigation to find your way.</p>
    </Layout>
  )
}
