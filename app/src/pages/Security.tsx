import type { PageProps } from "../App.tsx"
import { PageTitle } from "../ui.tsx"

export const SecurityPage = (_props: PageProps) => <PageTitle>Security</PageTitle>
