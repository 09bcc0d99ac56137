import type { PageProps } from "../App.tsx"
import { PageTitle } from "../ui.tsx"

export const BillingPage = (_props: PageProps) => <PageTitle>Billing</PageTitle>
