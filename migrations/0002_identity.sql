-- Identity read models: organizations, workspaces, memberships, users, API keys, and the audit
-- and metering records of capability invocations. Every value comes from an event (times too), so
-- a replay rebuilds the same rows. No foreign keys: each table is fed by another actor's events,
-- on another partition, in no guaranteed order.

-- Slugs and emails are not unique here: each organization and user is its own actor, so the
-- read model cannot refuse a duplicate without jamming the partition's projection. Uniqueness
-- belongs to a claim actor per slug or email (identity issue).
create table organizations (
  org_id text primary key,
  slug text not null,
  name text not null,
  created_at timestamptz not null
);
create index organizations_slug on organizations (slug);

create table workspaces (
  workspace_id text primary key,
  org_id text not null,
  slug text not null,
  name text not null,
  created_at timestamptz not null,
  unique (org_id, slug)
);

create table org_members (
  org_id text not null,
  user_id text not null,
  role text not null,
  primary key (org_id, user_id)
);
-- a user's organizations
create index org_members_user_id on org_members (user_id);

create table workspace_members (
  workspace_id text not null,
  user_id text not null,
  role text not null,
  primary key (workspace_id, user_id)
);
-- a user's workspaces
create index workspace_members_user_id on workspace_members (user_id);

create table users (
  user_id text primary key,
  email text not null,
  name text not null,
  created_at timestamptz not null
);
create index users_email on users (email);

create table api_keys (
  key_id text primary key,
  org_id text not null,
  workspace_id text,
  created_by text not null,
  name text not null,
  -- whoami finds a presented key by this
  lookup_id text not null unique,
  secret_hash text not null,
  scopes jsonb not null,
  status text not null,
  expires_at timestamptz,
  created_at timestamptz not null,
  revoked_at timestamptz
);
-- key listings of an organization or workspace
create index api_keys_org_id_workspace_id on api_keys (org_id, workspace_id);

create table audit_log (
  invocation_id text primary key,
  at timestamptz not null,
  org_id text not null,
  workspace_id text,
  capability text not null,
  surface text not null,
  principal_kind text not null,
  api_key_id text,
  user_id text,
  outcome text not null,
  error_tag text,
  duration_ms integer not null
);
-- the organization audit log, newest first
create index audit_log_org_id_at on audit_log (org_id, at);

create table metering (
  invocation_id text primary key,
  at timestamptz not null,
  org_id text not null,
  workspace_id text,
  capability text not null,
  units integer not null
);
-- usage of an organization over a period
create index metering_org_id_at on metering (org_id, at);
