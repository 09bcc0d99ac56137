-- Actor state between owners: the fold of each key's events, with the last applied seq (readers
-- apply an event only when its seq is the key's last seq + 1) and the command ids of its most
-- recent decisions (a retried command id yields no new events).
create table actor_state (
  key text primary key,
  kind text not null,
  seq integer not null,
  state jsonb not null,
  recent_commands jsonb not null,
  updated_at timestamptz not null
);

-- Where each partition's projection stands: the next log offset to apply. Written in the same
-- transaction as the rows, so the read models are exactly-once whatever crashes.
create table projection_checkpoints (
  partition integer primary key,
  next_offset bigint not null
);
