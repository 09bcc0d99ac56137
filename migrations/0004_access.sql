-- Access: browser sessions, passwords and two-factor, SSO providers and identities, CLI device
-- logins, organization security settings and custom roles, key rotation, uniqueness claims, and
-- security events in the audit log. Secrets appear only as hashes or sealed (encrypted) values.

create table org_settings (
  org_id text primary key,
  -- 'standard' or 'enterprise' (custom roles need enterprise)
  plan text not null,
  require_sso boolean not null,
  require_mfa boolean not null,
  -- when require_mfa is on, sessions without two-factor are refused from this time on
  mfa_grace_ends_at timestamptz
);

create table sso_providers (
  provider_id text primary key,
  org_id text not null,
  name text not null,
  issuer text not null,
  client_id text not null,
  client_secret_sealed text not null,
  -- 'registered' or 'verified'
  status text not null,
  created_at timestamptz not null,
  verified_at timestamptz
);
create index sso_providers_org_id on sso_providers (org_id);

create table custom_roles (
  org_id text not null,
  name text not null,
  -- 'organization' or 'workspace'
  scope text not null,
  -- the built-in roles it grants, e.g. ["workspace:member"]
  grants jsonb not null,
  primary key (org_id, name)
);

create table user_credentials (
  user_id text primary key,
  password_hash text,
  totp_secret_sealed text,
  totp_pending_sealed text,
  mfa_enabled_at timestamptz
);

create table sso_identities (
  provider_id text not null,
  subject text not null,
  org_id text not null,
  user_id text not null,
  linked_at timestamptz not null,
  primary key (provider_id, subject)
);
-- Require SSO checks a key's creator by this
create index sso_identities_user_id_org_id on sso_identities (user_id, org_id);

create table sessions (
  session_id text primary key,
  lookup_id text not null unique,
  secret_hash text not null,
  user_id text not null,
  -- 'password' or 'sso'
  method text not null,
  sso_org_id text,
  sso_provider_id text,
  mfa boolean not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  ended_at timestamptz
);

create table device_authorizations (
  device_id text primary key,
  user_code text not null unique,
  device_lookup text not null unique,
  device_secret_hash text not null,
  -- 'pending', 'approved', 'denied' or 'redeemed'
  status text not null,
  client_name text not null,
  org_id text,
  workspace_id text,
  user_id text,
  key_id text,
  created_at timestamptz not null,
  expires_at timestamptz not null
);

create table claims (
  namespace text not null,
  value text not null,
  owner_id text not null,
  claimed_at timestamptz not null,
  primary key (namespace, value)
);

alter table api_keys add column purpose text;
alter table api_keys add column custom_role text;
alter table api_keys add column machine_id text;
alter table api_keys add column supersedes text;
alter table api_keys add column superseded_by text;

-- Security events share the audit log with capability invocations: `kind` tells them apart.
alter table audit_log add column kind text not null default 'capability';
alter table audit_log add column event text;
alter table audit_log add column detail jsonb;
alter table audit_log alter column org_id drop not null;
alter table audit_log alter column capability drop not null;
alter table audit_log alter column surface drop not null;
alter table audit_log alter column outcome drop not null;
alter table audit_log alter column duration_ms drop not null;
alter table metering alter column org_id drop not null;
