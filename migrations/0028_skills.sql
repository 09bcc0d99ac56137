-- Workspace skills (actor `skill`, key skill:<workspaceId>.<slug>): one row per live skill, at its
-- current version. Agents name the skills attached to them (agents.skills, a JSON array of slugs).
create table skills (
  workspace_id text not null,
  slug text not null,
  org_id text not null,
  name text not null,
  description text not null,
  -- joins the system prompt of the turns of every agent it is attached to
  instructions text not null,
  -- 1 on creation, +1 per update that changed something
  version integer not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (workspace_id, slug)
);

alter table agents add column skills jsonb not null default '[]';
