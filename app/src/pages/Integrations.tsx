import type { PageProps } from "../App.tsx"
import { PageTitle } from "../ui.tsx"

export const IntegrationsPage = (_props: PageProps) => <PageTitle>Integrations</PageTitle>
export const ReauthPage = (_props: PageProps) => <PageTitle>Reconnect</PageTitle>
