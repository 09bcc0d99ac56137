-- Work orders (actors/workorder): created by an Owner or workspace Admin for the workspace's
-- machines, claimed by one of them. Every value comes from an event.
create table work_orders (
  work_order_id text primary key,
  org_id text not null,
  workspace_id text not null,
  title text not null,
  detail text,
  created_at timestamptz not null,
  claim_id text,
  -- the machine holding the claim
  claimed_by text,
  claimed_at timestamptz
);
create index work_orders_workspace on work_orders (workspace_id, created_at);
