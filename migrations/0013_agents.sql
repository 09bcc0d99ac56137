-- Workspace agents (actor `agent`, key agent:<workspaceId>.<slug>): one row per live agent. The
-- built-in default agent (slug 'assistant') has no row: it is the workspace assistant itself.

create table agents (
  workspace_id text not null,
  -- lowercase letters, digits and hyphens; unique in the workspace (one actor per slug)
  slug text not null,
  org_id text not null,
  name text not null,
  description text not null,
  -- joins the system prompt of the agent's turns
  instructions text not null,
  -- a model tier slug for turns that name none; null: the organization's default tier
  tier text,
  -- capability names (agent surface), a JSON array of strings
  tools jsonb not null,
  version integer not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (workspace_id, slug)
);
