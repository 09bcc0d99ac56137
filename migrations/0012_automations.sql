-- Automations (spec 2.8, 3.4, 4.4), projected by the automation and automation_run actors.

create table automations (
  -- aut_<32 hex>
  automation_id text primary key,
  org_id text not null,
  workspace_id text not null,
  name text not null,
  description text not null,
  -- 'event', 'schedule' or 'api'
  trigger_type text not null,
  -- for event triggers: the label watched and the node event type
  entity_type text,
  event_type text,
  trigger jsonb not null,
  steps jsonb not null,
  enabled boolean not null,
  -- when the trigger last went live (null while disabled)
  live_since timestamptz,
  -- 'human' or 'ai': where it was created from
  origin text not null,
  -- { userId, apiKeyId }: who its runs act for
  run_as jsonb not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  version integer not null,
  last_tick timestamptz,
  active_scheduled_run text
);
create index automations_workspace on automations (workspace_id, automation_id);
-- what the event reaction looks up for each node event
create index automations_watching on automations (workspace_id, entity_type, event_type) where trigger_type = 'event';
-- what the scheduler looks up
create index automations_scheduled on automations (trigger_type) where trigger_type = 'schedule';

create table automation_runs (
  -- arn_<32 hex>
  run_id text primary key,
  automation_id text not null,
  org_id text not null,
  workspace_id text not null,
  -- 'running', 'waiting', 'succeeded', 'failed' or 'skipped'
  status text not null,
  -- what fired it: the node event, the schedule tick or the API call
  trigger jsonb not null,
  -- the step timeline: every attempt at every step
  steps jsonb not null,
  -- { code, message, step } of a failed (or skipped) run
  error jsonb,
  created_at timestamptz not null,
  started_at timestamptz,
  ended_at timestamptz
);
-- an automation's recent runs
create index automation_runs_recent on automation_runs (automation_id, created_at desc);
-- runs a driver must resume
create index automation_runs_active on automation_runs (status) where status in ('running', 'waiting');

-- In-app notices for a person (the plugin marketplace adds its kinds).
create table notifications (
  notification_id text primary key,
  org_id text not null,
  workspace_id text,
  user_id text not null,
  -- 'automation_input', ...
  kind text not null,
  title text not null,
  body text not null,
  -- what it is about, e.g. { automationId, runId, index }
  subject jsonb not null,
  created_at timestamptz,
  resolved_at timestamptz
);
create index notifications_user on notifications (user_id, created_at desc);

-- How far each reaction to the log got on each partition (what its owner resumes from). The
-- automations reaction starts runs for node events: redoing a stretch starts nothing twice.
create table reaction_offsets (
  reaction text not null,
  partition integer not null,
  next bigint not null,
  primary key (reaction, partition)
);
