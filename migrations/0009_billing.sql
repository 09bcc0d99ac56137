-- Billing (the billing actor, `billing:<orgId>`): each organization's credits, suspension and spend
-- caps with what the current month and day have spent against them, and each workspace's monthly
-- budget and spend. Amounts are credits (one credit is one model token). A total whose month or day
-- is not the current one counts as zero: readers compare the period, nothing resets the rows.

create table billing_accounts (
  org_id text primary key,
  -- null: unmetered (the default); the operator's first grant turns metering on. May go below
  -- zero: a turn is charged after it ran.
  credits bigint,
  suspended boolean not null,
  -- null: no cap
  assistant_monthly_cap bigint,
  -- 'YYYY-MM' (UTC) that assistant_spent belongs to; null before the first charge
  assistant_month text,
  assistant_spent bigint not null,
  -- the organization's own model key: null is no limit
  model_key_daily_limit bigint,
  -- 'YYYY-MM-DD' (UTC) that model_key_spent belongs to
  model_key_day text,
  model_key_spent bigint not null,
  updated_at timestamptz not null
);

create table workspace_budgets (
  workspace_id text primary key,
  org_id text not null,
  -- null: no budget
  monthly_budget bigint,
  -- 'YYYY-MM' (UTC) that spent belongs to; null before the workspace's first charge
  month text,
  spent bigint not null,
  updated_at timestamptz not null
);
create index workspace_budgets_org_id on workspace_budgets (org_id);
