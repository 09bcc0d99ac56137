-- Plugin marketplace: the organization allow-list (org listings), workspace installs and plugin
-- credentials (spec 2.9, 3.5), projected by the listing and credential actors.

create table plugin_listings (
  -- porg_<32 hex>: a digest of (org_id, plugin_type, name), so the name's one actor keeps it unique
  listing_id text primary key,
  org_id text not null,
  -- 'mcp_server', 'integration', 'content_tool' or 'capability'
  plugin_type text not null,
  -- null: a custom server (or a capability pack)
  catalog_server_id text,
  -- 'registry', 'custom' or 'svc'
  source text not null,
  name text not null,
  title text,
  description text not null,
  icon_url text,
  endpoint_url text,
  -- 'streamable-http' or 'sse'
  transport text,
  -- 'oauth', 'secret' or 'none'
  auth_kind text not null,
  -- non-secret: { header, valuePrefix, scopes }
  auth_config jsonb not null,
  enabled boolean not null,
  config jsonb not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  -- the soft-delete marker: set by plugin.org.uninstall
  deleted_at timestamptz,
  unique (org_id, plugin_type, name)
);

create table plugin_workspace_installs (
  workspace_id text not null,
  listing_id text not null,
  org_id text not null,
  enabled boolean not null,
  -- 'unknown', 'healthy' or 'unhealthy'
  health_status text not null,
  last_health_check_at timestamptz,
  health_error text,
  -- string[]: the tools the server listed at the last healthy check
  tools jsonb not null,
  updated_at timestamptz not null,
  primary key (workspace_id, listing_id)
);
create index plugin_workspace_installs_listing on plugin_workspace_installs (listing_id);

-- Every secret column holds an envelope (src/marketplace/Envelope.ts), never plain text.
create table plugin_credentials (
  -- mcrd_<32 hex>: a digest of (workspace_id, listing_id)
  credential_id text primary key,
  org_id text not null,
  workspace_id text not null,
  listing_id text not null,
  -- 'oauth' or 'secret'
  auth_kind text not null,
  access_token_enc text,
  refresh_token_enc text,
  secret_enc text,
  oauth_client_secret_enc text,
  -- the key label the envelopes were wrapped under ('mcp_cred_v1'); null: no secret stored
  token_kms_key_id text,
  oauth_client_id text,
  -- string[]
  scopes jsonb not null,
  expires_at timestamptz,
  -- 'active', 'needs_reauth' or 'revoked'
  status text not null,
  last_refreshed_at timestamptz,
  -- { authorizationServerUrl, resource }: where the tokens come from (non-secret)
  oauth jsonb,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  unique (workspace_id, listing_id)
);
-- the refresh watcher's question: which active OAuth credentials expire soon
create index plugin_credentials_expiry on plugin_credentials (expires_at) where status = 'active' and auth_kind = 'oauth';
