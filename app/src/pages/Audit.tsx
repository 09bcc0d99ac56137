import type { PageProps } from "../App.tsx"
import { PageTitle } from "../ui.tsx"

export const AuditPage = (_props: PageProps) => <PageTitle>Audit</PageTitle>
