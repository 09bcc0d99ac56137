/** The web app's build: app/ into app/dist, every file bundled (no CDN), hashed names under assets/. */
import react from "@vitejs/plugin-react"
import { defineConfig } from "vite"

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    assetsDir: "assets",
    // the gateway serves index.html for every app route, so asset URLs are absolute
    modulePreload: { polyfill: false },
    reportCompressedSize: false
  },
  base: "/",
  server: {
    // `npm run dev:app`: the app with hot reload, its API calls sent to a node on :8080
    proxy: { "/v1": "http://127.0.0.1:8080", "/api": "http://127.0.0.1:8080" }
  }
})
