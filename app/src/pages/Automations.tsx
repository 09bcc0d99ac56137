import type { PageProps } from "../App.tsx"
import { PageTitle } from "../ui.tsx"

export const AutomationsPage = (_props: PageProps) => <PageTitle>Automations</PageTitle>
export const NewAutomationPage = (_props: PageProps) => <PageTitle>New automation</PageTitle>
export const AutomationPage = (_props: PageProps) => <PageTitle>Automation</PageTitle>
