import type { PageProps } from "../App.tsx"
import { PageTitle } from "../ui.tsx"

export const ChatPage = (_props: PageProps) => <PageTitle>Chat</PageTitle>
