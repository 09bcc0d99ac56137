/**
 * A small router over the History API: the app has a dozen flat routes, not worth a library's
 * weight in the first load. Paths are patterns with `:name` segments.
 */
import { type AnchorHTMLAttributes, type MouseEvent, useEffect, useSyncExternalStore } from "react"

const listeners = new Set<() => void>()
const notify = () => {
  for (const listener of listeners) listener()
}
window.addEventListener("popstate", notify)

const subscribe = (listener: () => void) => {
  listeners.add(listener)
  return () => listeners.delete(listener)
}
const currentPath = () => window.location.pathname + window.location.search

/** The current path with its query, re-rendering on every navigation. */
export const useLocation = (): string => useSyncExternalStore(subscribe, currentPath)

export const navigate = (to: string, options: { replace?: boolean } = {}) => {
  if (to === currentPath()) return
  if (options.replace) window.history.replaceState(null, "", to)
  else window.history.pushState(null, "", to)
  window.scrollTo(0, 0)
  notify()
}

/** `:name` segments of `pattern` matched against `path` (without its query), or undefined. */
export const matchPath = (pattern: string, path: string): Record<string, string> | undefined => {
  const want = pattern.split("/").filter(Boolean)
  const got = path.split("?")[0].split("/").filter(Boolean)
  if (want.length !== got.length) return undefined
  const params: Record<string, string> = {}
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(":")) {
      try {
        params[want[i].slice(1)] = decodeURIComponent(got[i])
      } catch {
        return undefined
      }
    } else if (want[i] !== got[i]) return undefined
  }
  return params
}

/** The query string's parameters of the current location. */
export const useQueryParams = (): URLSearchParams => new URLSearchParams(useLocation().split("?")[1] ?? "")

/** An anchor that navigates in the app (a modified click opens a tab, as links do). */
export const Link = ({ to, onClick, ...rest }: AnchorHTMLAttributes<HTMLAnchorElement> & { to: string }) => (
  <a
    href={to}
    {...rest}
    onClick={(event: MouseEvent<HTMLAnchorElement>) => {
      onClick?.(event)
      if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
      event.preventDefault()
      navigate(to)
    }}
  />
)

/** Navigates once rendered, replacing the current entry. */
export const Redirect = ({ to }: { to: string }) => {
  useEffect(() => navigate(to, { replace: true }), [to])
  return null
}
