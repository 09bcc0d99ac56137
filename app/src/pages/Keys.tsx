import type { PageProps } from "../App.tsx"
import { PageTitle } from "../ui.tsx"

export const KeysPage = (_props: PageProps) => <PageTitle>Keys</PageTitle>
