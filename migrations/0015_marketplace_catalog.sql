-- Plugin marketplace: registries and the catalog of MCP servers they list (spec 2.9, 6.3.3,
-- 6.3.4), projected by the registry actor.

create table registries (
  -- mreg_<32 hex>
  registry_id text primary key,
  -- null: the global default seed, visible to every organization
  org_id text,
  name text not null,
  base_url text not null,
  enabled boolean not null,
  is_default_seed boolean not null,
  created_at timestamptz not null,
  -- when the last completed pass began: the next incremental pass asks for what changed since
  last_synced_at timestamptz,
  -- where an unfinished pass stands (null: none under way, or it was at its first page)
  last_synced_cursor text,
  -- the sync holding the lease: { syncId, mode, startedAt, leaseMs, leaseUntil, counts }
  sync jsonb,
  -- how the last sync ended: { syncId, mode, status, reason, startedAt, endedAt, durationMs, counts }
  last_sync jsonb
);
create index registries_org on registries (org_id);

-- every ended sync, with its duration and counts (and the reason of a failure)
create table registry_syncs (
  sync_id text primary key,
  registry_id text not null,
  -- 'full', 'incremental' or 'server'
  mode text not null,
  -- 'succeeded' or 'failed'
  status text not null,
  reason text,
  started_at timestamptz not null,
  ended_at timestamptz not null,
  duration_ms integer not null,
  -- { pages, fetched, upserted, skipped, deleted }
  counts jsonb not null,
  recorded_at timestamptz not null
);
create index registry_syncs_registry on registry_syncs (registry_id, ended_at);

create table catalog_servers (
  -- mcat_<32 hex>: a digest of (registry_id, name, version)
  server_id text primary key,
  registry_id text not null,
  -- reverse-DNS
  name text not null,
  version text not null,
  title text,
  description text not null,
  -- { url, source, id, subfolder }
  repository jsonb,
  website_url text,
  icons jsonb not null,
  packages jsonb not null,
  remotes jsonb not null,
  -- string[]: the distinct transport types of packages and remotes
  transport_types jsonb not null,
  -- 'oauth', 'secret' or 'none'
  auth_kind text not null,
  -- string[]
  categories jsonb not null,
  -- 'active', 'deprecated' or 'deleted'
  status text not null,
  published_at timestamptz,
  upstream_updated_at timestamptz,
  status_changed_at timestamptz,
  -- the registry's `_meta`, whole
  meta jsonb not null,
  synced_at timestamptz not null,
  unique (registry_id, name, version)
);
create index catalog_servers_name on catalog_servers (registry_id, name);

-- a name's newest version: one row per name, so only one version of it is latest; it carries what
-- browsing searches and filters on, so a browse reads this table alone until its page is known
create table catalog_latest (
  registry_id text not null,
  name text not null,
  version text not null,
  server_id text not null,
  title text,
  description text not null,
  status text not null,
  transport_types jsonb not null,
  auth_kind text not null,
  categories jsonb not null,
  search tsvector generated always as (
    to_tsvector('simple', translate(name, './-_@', '     ') || ' ' || coalesce(title, '') || ' ' || description)
  ) stored,
  primary key (registry_id, name)
);
create index catalog_latest_search on catalog_latest using gin (search);
create index catalog_latest_order on catalog_latest (name, server_id);

-- a catalog server's README, sanitized HTML (null: none found on the supported host)
create table catalog_readmes (
  server_id text primary key,
  registry_id text not null,
  readme_html text,
  readme_fetched_at timestamptz not null
);
