import { QueryClient, QueryClientProvider } from "@tanstack/react-query"
import { StrictMode } from "react"
import { createRoot } from "react-dom/client"
import { ApiError } from "./api.ts"
import { App } from "./App.tsx"
import { PageErrorBoundary } from "./ui.tsx"
import "./styles.css"

const client = new QueryClient({
  defaultOptions: {
    queries: {
      // a refusal will not change by asking again; a dropped connection may
      retry: (count, error) => count < 2 && !(error instanceof ApiError && error.status >= 400 && error.status < 500),
      refetchOnWindowFocus: true
    }
  }
})

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <QueryClientProvider client={client}>
      <PageErrorBoundary resetKey="app">
        <App />
      </PageErrorBoundary>
    </QueryClientProvider>
  </StrictMode>
)
