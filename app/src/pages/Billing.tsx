/**
 * Usage and billing: this workspace's assistant spend this month (`spend.get`) against its budget
 * (set by an Admin or Owner, `workspace.budget.set`), and for an Owner the organization's credits,
 * caps and every workspace's budget (`org.billing.get`, `org.billing.set_caps`). Amounts are
 * credits: one credit is one model token.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query"
import { type FormEvent, type ReactNode, useState } from "react"
import type { PageProps } from "../App.tsx"
import { invoke, type Place } from "../api.ts"
import { useAccess } from "../session.tsx"
import { ErrorNote, Field, Loading, PageTitle } from "../ui.tsx"
import "./Billing.css"

interface RunSpend {
  readonly runs: number
  readonly promptTokens: number
  readonly completionTokens: number
  readonly totalTokens: number
  readonly credits: number
}

interface Spend extends RunSpend {
  readonly month: string
  readonly spent: number
  readonly budget: number | null
  readonly remaining: number | null
  readonly byDay: ReadonlyArray<RunSpend & { readonly day: string }>
  readonly byModel: ReadonlyArray<RunSpend & { readonly model: string }>
}

interface Billing {
  readonly credits: number | null
  readonly suspended: boolean
  readonly assistantMonthlyCap: number | null
  readonly modelKeyDailyLimit: number | null
  readonly month: string
  readonly assistantSpentThisMonth: number
  readonly day: string
  readonly modelKeySpentToday: number
  readonly workspaces: ReadonlyArray<{ readonly workspaceId: string; readonly slug: string; readonly monthlyBudget: number | null; readonly spentThisMonth: number }>
}

const spendKey = (place: Place) => ["spend", place.org, place.ws] as const
const billingKey = (place: Place) => ["billing", place.org] as const

const number = (value: number) => value.toLocaleString()
const credits = (value: number) => `${number(value)} ${value === 1 ? "credit" : "credits"}`

/** A `YYYY-MM` month in words, in the person's locale. */
const monthName = (month: string) => new Date(`${month}-01T00:00:00Z`).toLocaleDateString(undefined, { month: "long", year: "numeric", timeZone: "UTC" })

/** An amount input's value: empty for none, else a whole number of credits. */
const parseAmount = (text: string): number | null => (text.trim() === "" ? null : Number(text))
const amountText = (value: number | null) => (value === null ? "" : String(value))

/** How much of a limit is used, as a bar read out as a percentage. */
const Usage = ({ label, used, limit }: { label: string; used: number; limit: number | null }) =>
  limit === null ? null : (
    <div className="usage">
      <meter aria-label={label} min={0} max={Math.max(limit, 1)} low={limit * 0.75} high={limit * 0.9} optimum={0} value={Math.min(used, limit)} />
      <span className="muted">{limit === 0 ? "no spend allowed" : `${Math.min(100, Math.round((used / limit) * 100))}% used`}</span>
    </div>
  )

const Facts = ({ children }: { children: ReactNode }) => <dl className="facts">{children}</dl>
const Fact = ({ term, children }: { term: string; children: ReactNode }) => (
  <div>
    <dt>{term}</dt>
    <dd>{children}</dd>
  </div>
)

const SpendTable = ({ caption, first, rows }: { caption: string; first: string; rows: ReadonlyArray<RunSpend & { readonly key: string }> }) => (
  <div className="table-scroll" tabIndex={0}>
    <table>
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{first}</th>
          <th scope="col">Runs</th>
          <th scope="col">Prompt tokens</th>
          <th scope="col">Completion tokens</th>
          <th scope="col">Credits</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.key}>
            <th scope="row">{row.key}</th>
            <td>{number(row.runs)}</td>
            <td>{number(row.promptTokens)}</td>
            <td>{number(row.completionTokens)}</td>
            <td>{number(row.credits)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
)

const BudgetForm = ({ place, budget }: { place: Place; budget: number | null }) => {
  const client = useQueryClient()
  const [text, setText] = useState(amountText(budget))
  const [saved, setSaved] = useState<string | undefined>(undefined)
  const save = useMutation({
    mutationFn: (monthlyBudget: number | null) => invoke<{ monthlyBudget: number | null }>(place, "workspace.budget.set", { monthlyBudget }),
    onSuccess: (result) => {
      setText(amountText(result.monthlyBudget))
      setSaved(result.monthlyBudget === null ? "The workspace has no budget now." : `The budget is now ${credits(result.monthlyBudget)} a month.`)
      void client.invalidateQueries({ queryKey: spendKey(place) })
      void client.invalidateQueries({ queryKey: billingKey(place) })
    }
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    setSaved(undefined)
    save.mutate(parseAmount(text))
  }
  return (
    <form onSubmit={submit} className="card" aria-labelledby="budget-heading">
      <h3 id="budget-heading">Set the monthly budget</h3>
      <Field label="Monthly budget (credits)" hint="Turns in this workspace are refused once this month's spend reaches it. Leave empty for no budget.">
        {(id, hint) => <input id={id} aria-describedby={hint} type="number" min={0} step={1} inputMode="numeric" value={text} onChange={(event) => setText(event.target.value)} />}
      </Field>
      <ErrorNote error={save.error} title="The budget was not saved" />
      <div role="status" aria-live="polite">
        {saved !== undefined && <p className="ok-note">{saved}</p>}
      </div>
      <button type="submit" className="primary" disabled={save.isPending}>
        Save budget
      </button>
    </form>
  )
}

const SpendFacts = ({ place, spend: s, canSetBudget }: { place: Place; spend: Spend; canSetBudget: boolean }) => (
  <>
    <Facts>
      <Fact term="Spent">{credits(s.spent)}</Fact>
      <Fact term="Monthly budget">{s.budget === null ? "No budget" : credits(s.budget)}</Fact>
      {s.remaining !== null && <Fact term="Left this month">{credits(s.remaining)}</Fact>}
      <Fact term="Assistant runs">{number(s.runs)}</Fact>
      <Fact term="Tokens">{number(s.totalTokens)}</Fact>
    </Facts>
    <Usage label="Budget used" used={s.spent} limit={s.budget} />
    {s.budget !== null && s.remaining === 0 && <p className="warn-note">The budget is spent: new turns in this workspace are refused until next month or a larger budget.</p>}
    {s.runs === 0 ? (
      <p className="muted">No assistant runs have used tokens this month.</p>
    ) : (
      <>
        <SpendTable caption="By model" first="Model" rows={s.byModel.map((row) => ({ ...row, key: row.model }))} />
        <SpendTable caption="By day (UTC)" first="Day" rows={s.byDay.map((row) => ({ ...row, key: row.day }))} />
      </>
    )}
    {canSetBudget && <BudgetForm key={String(s.budget)} place={place} budget={s.budget} />}
  </>
)

const WorkspaceSpend = ({ place, canSetBudget }: { place: Place; canSetBudget: boolean }) => {
  const spend = useQuery({ queryKey: spendKey(place), queryFn: () => invoke<Spend>(place, "spend.get") })
  return (
    <section aria-labelledby="spend-heading">
      <h2 id="spend-heading">This workspace{spend.data === undefined ? "" : `, ${monthName(spend.data.month)}`}</h2>
      {spend.isPending ? (
        <Loading what="this workspace's spend" />
      ) : spend.isError ? (
        <ErrorNote error={spend.error} title="This workspace's spend could not be loaded" />
      ) : (
        <SpendFacts place={place} spend={spend.data} canSetBudget={canSetBudget} />
      )}
    </section>
  )
}

const CapsForm = ({ place, billing }: { place: Place; billing: Billing }) => {
  const client = useQueryClient()
  const [cap, setCap] = useState(amountText(billing.assistantMonthlyCap))
  const [limit, setLimit] = useState(amountText(billing.modelKeyDailyLimit))
  const save = useMutation({
    mutationFn: () => invoke(place, "org.billing.set_caps", { assistantMonthlyCap: parseAmount(cap), modelKeyDailyLimit: parseAmount(limit) }),
    onSuccess: () => client.invalidateQueries({ queryKey: billingKey(place) })
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    save.mutate()
  }
  return (
    <form onSubmit={submit} className="card" aria-labelledby="caps-heading">
      <h3 id="caps-heading">Set the caps</h3>
      <Field label="Monthly assistant cap (credits)" hint="Turns are refused once this month's assistant spend reaches it. Empty: no cap.">
        {(id, hint) => <input id={id} aria-describedby={hint} type="number" min={0} step={1} inputMode="numeric" value={cap} onChange={(event) => setCap(event.target.value)} />}
      </Field>
      <Field label="Daily limit of your own model key (credits)" hint="Turns on the organization's own model key stop once today's spend on it reaches it. Empty: no limit.">
        {(id, hint) => <input id={id} aria-describedby={hint} type="number" min={0} step={1} inputMode="numeric" value={limit} onChange={(event) => setLimit(event.target.value)} />}
      </Field>
      <ErrorNote error={save.error} title="The caps were not saved" />
      <div role="status" aria-live="polite">
        {save.isSuccess && <p className="ok-note">The caps are saved.</p>}
      </div>
      <button type="submit" className="primary" disabled={save.isPending}>
        Save caps
      </button>
    </form>
  )
}

const OrganizationBilling = ({ place, canSetCaps }: { place: Place; canSetCaps: boolean }) => {
  const billing = useQuery({ queryKey: billingKey(place), queryFn: () => invoke<Billing>(place, "org.billing.get") })
  if (billing.isPending) return <Loading what="the organization's billing" />
  if (billing.isError) return <ErrorNote error={billing.error} title="The organization's billing could not be loaded" />
  const b = billing.data
  return (
    <>
      {b.suspended && <p className="warn-note">The organization is suspended by the operator: assistant turns are refused until it is resumed.</p>}
      <Facts>
        <Fact term="Credits left">{b.credits === null ? "Not metered" : credits(b.credits)}</Fact>
        <Fact term={`Assistant spend, ${monthName(b.month)}`}>
          {credits(b.assistantSpentThisMonth)}
          {b.assistantMonthlyCap === null ? ", no cap" : ` of a ${credits(b.assistantMonthlyCap)} cap`}
        </Fact>
        <Fact term={`Own model key, ${b.day}`}>
          {credits(b.modelKeySpentToday)}
          {b.modelKeyDailyLimit === null ? ", no daily limit" : ` of a ${credits(b.modelKeyDailyLimit)} daily limit`}
        </Fact>
      </Facts>
      <Usage label="Monthly assistant cap used" used={b.assistantSpentThisMonth} limit={b.assistantMonthlyCap} />
      <div className="table-scroll" tabIndex={0}>
        <table>
          <caption>Workspace budgets</caption>
          <thead>
            <tr>
              <th scope="col">Workspace</th>
              <th scope="col">Monthly budget</th>
              <th scope="col">Spent this month</th>
            </tr>
          </thead>
          <tbody>
            {b.workspaces.map((ws) => (
              <tr key={ws.workspaceId}>
                <th scope="row">{ws.slug}</th>
                <td>{ws.monthlyBudget === null ? "No budget" : credits(ws.monthlyBudget)}</td>
                <td>{credits(ws.spentThisMonth)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {canSetCaps && <CapsForm key={`${b.assistantMonthlyCap}/${b.modelKeyDailyLimit}`} place={place} billing={b} />}
    </>
  )
}

export const BillingPage = ({ place }: PageProps) => {
  const access = useAccess(place)
  return (
    <div className="billing-page">
      <PageTitle>Usage &amp; billing</PageTitle>
      {access.isPending ? (
        <Loading what="your access" />
      ) : (
        <>
          {access.can("spend.get") ? (
            <WorkspaceSpend place={place} canSetBudget={access.can("workspace.budget.set")} />
          ) : (
            <p className="warn-note" role="note">
              Your role in this workspace does not include its spend. Workspace Admins and Members, and organization Owners, can see it.
            </p>
          )}
          {access.can("org.billing.get") && (
            <section aria-labelledby="org-heading">
              <h2 id="org-heading">The organization</h2>
              <OrganizationBilling place={place} canSetCaps={access.can("org.billing.set_caps")} />
            </section>
          )}
        </>
      )}
    </div>
  )
}
