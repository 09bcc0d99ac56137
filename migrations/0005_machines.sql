-- Machine credentials' records (spec 5 rule 8): enrolled machines (actors/machine), what their
-- host keys recorded, and telemetry batches (actors/telemetry). Every value comes from an event.

-- One row per enrolled machine; a machine belongs to one workspace.
create table machines (
  machine_id text primary key,
  org_id text not null,
  workspace_id text not null,
  -- the host key issued with the enrolment (or whose first call enrolled it)
  key_id text not null,
  enrolled_at timestamptz not null,
  last_seen_at timestamptz not null,
  events_ingested bigint not null,
  memories integer not null,
  work_orders_claimed integer not null,
  codegraph_builds integer not null,
  certificate_renewals integer not null
);
create index machines_workspace_id on machines (workspace_id, machine_id);

-- Append-only: one row per recorded call of a host key.
create table machine_records (
  record_id text primary key,
  machine_id text not null,
  org_id text not null,
  workspace_id text not null,
  -- 'events', 'memory', 'work_order_claim', 'codegraph_build' or 'certificate_renewal'
  kind text not null,
  -- the work order id of a claim, the repository of a code graph build
  subject text,
  -- a memory's text, a renewal's certificate signing request
  body text,
  detail jsonb not null,
  at timestamptz not null
);
create index machine_records_workspace_kind on machine_records (workspace_id, kind, at);
create index machine_records_machine_kind on machine_records (machine_id, kind, at);
-- who holds a work order's claim
create index machine_records_subject on machine_records (workspace_id, kind, subject);

-- Append-only: one row per telemetry batch.
create table telemetry_batches (
  batch_id text primary key,
  org_id text not null,
  workspace_id text,
  key_id text not null,
  point_count integer not null,
  points jsonb not null,
  at timestamptz not null
);
create index telemetry_batches_org_workspace on telemetry_batches (org_id, workspace_id, at);
