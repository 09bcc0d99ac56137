-- What Owners and workspace Admins set for a workspace's machines (actors/fleet, actors/machine),
-- read by the machines' host keys (spec 5 rule 8). Every value comes from an event.

-- The current policy bundle of each workspace that set one (none: version 0, no rules).
create table machine_policies (
  workspace_id text primary key,
  org_id text not null,
  version integer not null,
  rules jsonb not null,
  set_by text not null,
  set_at timestamptz not null
);

-- The repositories a workspace's machines may get a Git credential for.
create table workspace_repositories (
  workspace_id text not null,
  org_id text not null,
  repository text not null,
  registered_by text not null,
  registered_at timestamptz not null,
  primary key (workspace_id, repository)
);

-- Append-only: commands queued for a machine, and the machine's acknowledgement of each.
create table machine_commands (
  command_id text primary key,
  machine_id text not null,
  org_id text not null,
  workspace_id text not null,
  name text not null,
  arguments jsonb,
  enqueued_by text not null,
  enqueued_at timestamptz not null
);
create index machine_commands_machine on machine_commands (machine_id, enqueued_at);
create index machine_commands_workspace on machine_commands (workspace_id, enqueued_at);

create table machine_command_acks (
  command_id text primary key,
  machine_id text not null,
  -- 'succeeded' or 'failed'
  outcome text not null,
  detail text,
  acknowledged_at timestamptz not null
);
