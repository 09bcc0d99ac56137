import type { Account } from "../session.tsx"
import { PageTitle } from "../ui.tsx"

export const DevicePage = (_props: { account: Account }) => <PageTitle>Approve a CLI login</PageTitle>
