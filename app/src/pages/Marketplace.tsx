import type { PageProps } from "../App.tsx"
import { PageTitle } from "../ui.tsx"

export const MarketplacePage = (_props: PageProps) => <PageTitle>Marketplace</PageTitle>
export const ServerPage = (_props: PageProps) => <PageTitle>Server</PageTitle>
