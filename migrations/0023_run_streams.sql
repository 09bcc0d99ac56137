-- A turn's chat stream in the chunks it was recorded in (`run.streamed`, actors/conversation):
-- what the resume route (GET chat/turns/{runId}/stream) replays to a client that lost its stream.
create table run_stream_chunks (
  run_id text not null,
  conversation_id text not null,
  -- the `seq` (SSE `id:`) of the chunk's first and last event
  first_seq integer not null,
  last_seq integer not null,
  -- [{seq, event}], the chat events as encoded on the wire
  events jsonb not null,
  recorded_at timestamptz not null,
  primary key (run_id, first_seq)
);
