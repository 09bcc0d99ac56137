-- A person's edits of their runs (run.update): title, tags and pin, a row once a run is edited.
create table run_edits (
  run_id text primary key,
  conversation_id text not null,
  title text,
  tags jsonb not null default '[]',
  pinned boolean not null default false,
  updated_at timestamptz not null
);
