import type { PageProps } from "../App.tsx"
import { PageTitle } from "../ui.tsx"

export const NotificationsPage = (_props: PageProps) => <PageTitle>Notifications</PageTitle>
