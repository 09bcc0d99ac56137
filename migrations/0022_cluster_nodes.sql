-- What each running node says of itself (issue 25, cluster.get): its build, whether it drains, and
-- the partitions it is caught up and deciding on. The consumer group tells who owns what; only the
-- node knows the rest, so it writes this row every few seconds and removes it as it stops. A row
-- not refreshed for three periods is stale (the node died) and is not shown.
create table cluster_nodes (
  node_id text primary key,
  version text not null,
  draining boolean not null,
  ready integer[] not null,
  seen_at timestamptz not null
);
