/**
 * A real headless Chromium (Debian's `chromium` package, or CHROMIUM_PATH) driven by
 * playwright-core, for the app's end-to-end suites: nothing is downloaded, and the flags keep it
 * off the network it could not reach anyway.
 */
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import type { Person } from "./people.ts"

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"

const CHROMIUM_FLAGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]

/** The app must be built for the gateway to serve it (`npm test` builds it first). */
export const assertAppBuilt = () => {
  const index = fileURLToPath(new URL("../../app/dist/index.html", import.meta.url))
  if (!existsSync(index)) throw new Error(`the web app is not built (${index} is missing): run \`npm run build:app\``)
}

export const launchBrowser = async (): Promise<Browser> => {
  assertAppBuilt()
  return launchChromium()
}

/** Chromium for a suite that serves pages of its own rather than the app. */
export const launchChromium = async (): Promise<Browser> => {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: install Debian's chromium package (apt-get install chromium) or set CHROMIUM_PATH`)
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_FLAGS, headless: true })
}

/**
 * A fresh browser profile (its own cookies) on `baseUrl`; `phone` gives a 390px-wide screen;
 * `bypassCsp` lets a test inject a checker script the app's own CSP would refuse.
 */
export const newContext = (browser: Browser, baseUrl: string, options: { phone?: boolean; bypassCsp?: boolean } = {}): Promise<BrowserContext> =>
  browser.newContext({
    baseURL: baseUrl,
    bypassCSP: options.bypassCsp === true,
    viewport: options.phone ? { width: 390, height: 844 } : { width: 1280, height: 860 },
    ...(options.phone ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}),
    permissions: ["clipboard-read", "clipboard-write"]
  })

/**
 * Signs `person` in through the sign-in page, as a person would, and waits for the app to leave
 * it. `code` answers the two-factor step when the server asks for it.
 */
export const signInThroughPage = async (page: Page, person: Pick<Person, "email" | "password">, options: { next?: string; code?: () => string } = {}) => {
  await page.goto(options.next === undefined ? "/sign-in" : `/sign-in?next=${encodeURIComponent(options.next)}`)
  await page.getByLabel("Email").fill(person.email)
  await page.getByLabel("Password").fill(person.password)
  await page.getByRole("button", { name: "Sign in" }).click()
  if (options.code !== undefined) {
    const code = page.getByLabel("Two-factor code")
    await code.waitFor()
    await code.fill(options.code())
    await page.getByRole("button", { name: "Verify and sign in" }).click()
  }
  await page.waitForURL((url) => url.pathname !== "/sign-in")
}

/** Fails the test on any uncaught error in the page, and on a console error the test did not expect. */
export const watchForPageErrors = (page: Page, allow: ReadonlyArray<RegExp> = []) => {
  const errors: Array<string> = []
  page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`))
  page.on("console", (message) => {
    if (message.type() === "error" && !allow.some((pattern) => pattern.test(message.text()))) errors.push(`console: ${message.text()}`)
  })
  return errors
}

/** A fresh context signed in as `person` through the sign-in page, landing on `next`; the page's unexpected errors. */
export const openAs = async (
  browser: Browser,
  baseUrl: string,
  person: Pick<Person, "email" | "password">,
  next: string,
  /** `authorizationServer`: the issuer whose pages the browser will visit (their missing icon is not the app's failure). */
  options: { readonly phone?: boolean; readonly authorizationServer?: string } = {}
): Promise<{ page: Page; errors: Array<string> }> => {
  const context = await newContext(browser, baseUrl, { phone: options.phone })
  if (options.authorizationServer !== undefined) await context.route(`${options.authorizationServer}/favicon.ico`, (route) => route.fulfill({ status: 204 }))
  const page = await context.newPage()
  // the app asks who is signed in before signing in: a 401 the browser logs
  const errors = watchForPageErrors(page, [/status of 401/])
  await signInThroughPage(page, person, { next })
  return { page, errors }
}

/**
 * Signs in as `email` and consents at an authorization server's own pages (oidc-provider's, at
 * `issuer`) until the browser is back in the app; the URL it came back to.
 */
export const authorizeAtProvider = async (page: Page, issuer: string, email: string) => {
  const provider = new URL(issuer).host
  const signIn = page.getByRole("button", { name: "Sign in" })
  const consent = page.getByRole("button", { name: "Continue" })
  const deadline = Date.now() + 20_000
  while (Date.now() < deadline) {
    const url = new URL(page.url())
    if (url.host !== provider && (url.searchParams.has("connected") || url.searchParams.has("oauth_error"))) return url
    if (url.host === provider && (await signIn.isVisible())) {
      await page.getByRole("textbox").fill(email)
      await signIn.click()
    } else if (url.host === provider && (await consent.isVisible())) {
      await consent.click()
    } else {
      await page.waitForTimeout(100)
    }
  }
  throw new Error(`the browser did not come back from the authorization server (at ${page.url()})`)
}

/** Through the bell to the Notifications page; the notice whose heading is `title` there. */
export const noticeFromBell = async (page: Page, title: string) => {
  await page.getByRole("link", { name: /^Notifications, \d+ unread$/ }).click()
  await page.getByRole("heading", { name: "Notifications", level: 1 }).waitFor()
  return page.getByRole("listitem").filter({ has: page.getByRole("heading", { name: title }) })
}
