import type { PageProps } from "../App.tsx"
import { PageTitle } from "../ui.tsx"

export const ApprovalsPage = (_props: PageProps) => <PageTitle>Approvals</PageTitle>
