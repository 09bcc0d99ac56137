-- The node running each run, and when each node's process started (node's own clock, as the runs'
-- started_at): a run whose node is gone, or restarted since it started the run, lost its process,
-- and the sweeper ends it within seconds instead of after the longest a turn can run.
alter table runs add column node_id text;
alter table cluster_nodes add column started_at timestamptz;
