-- Assistant chat (docs/chat.md): conversations, their messages, runs, approvals and questions,
-- projected by the conversation actor. Ids are text: a malformed id in a route is simply not
-- found. No unique index beyond primary keys: a duplicate would jam the projection's partition.

create table conversations (
  conversation_id text primary key,
  -- cnv_<32 hex>
  public_id text not null,
  org_id text not null,
  workspace_id text not null,
  created_by text not null,
  created_at timestamptz not null,
  message_count integer not null,
  -- turn runs started (approval runs are not turns)
  turn_count integer not null,
  -- the note standing for the oldest summary_covers_messages messages, written at turn summary_at_turn
  summary text,
  summary_covers_messages integer,
  summary_at_turn integer,
  summary_rewritten_at timestamptz
);
create index conversations_workspace_id_public_id on conversations (workspace_id, public_id);

create table messages (
  message_id text primary key,
  conversation_id text not null,
  run_id text not null,
  -- 'user' or 'assistant'
  role text not null,
  content text not null,
  -- gen_ file ids
  attachments jsonb not null,
  -- 1-based place in the conversation
  position integer not null,
  created_at timestamptz not null
);
create index messages_conversation_id_position on messages (conversation_id, position);

create table runs (
  run_id text primary key,
  conversation_id text not null,
  org_id text not null,
  workspace_id text not null,
  -- 'turn' or 'approval'
  kind text not null,
  turn_id text,
  user_id text not null,
  api_key_id text,
  -- set for an approval run
  approval_id text,
  model text not null,
  tier text,
  effort text,
  carried_summary boolean not null,
  -- 'running', 'finished', 'failed' or 'stopped'
  status text not null,
  stop_requested boolean not null,
  assistant_message_id text,
  reply text,
  -- the turn result (spec 2.3)
  result jsonb,
  -- {promptTokens, completionTokens, totalTokens}
  usage jsonb,
  -- {code, reason, message}
  error jsonb,
  started_at timestamptz not null,
  ended_at timestamptz
);
-- the cancel route finds a running turn by its caller's turn id
create index runs_workspace_id_turn_id on runs (workspace_id, turn_id) where turn_id is not null;
-- the sweeper ends runs whose process died
create index runs_running_started_at on runs (started_at) where status = 'running';

create table approvals (
  approval_id text primary key,
  -- apr_<32 hex>
  public_id text not null,
  conversation_id text not null,
  org_id text not null,
  workspace_id text not null,
  run_id text not null,
  tool_call_id text not null,
  capability text not null,
  input jsonb,
  input_preview text not null,
  -- the asking person
  user_id text not null,
  -- 'parked', 'approved' or 'denied'
  status text not null,
  expires_at timestamptz not null,
  parked_at timestamptz not null,
  note text,
  resolved_by text,
  resolved_at timestamptz,
  execution_run_id text
);
create index approvals_workspace_id_public_id on approvals (workspace_id, public_id);

create table questions (
  question_id text primary key,
  conversation_id text not null,
  org_id text not null,
  workspace_id text not null,
  run_id text not null,
  -- the asking person
  user_id text not null,
  question text not null,
  options jsonb not null,
  -- 'waiting', 'answered' or 'closed'
  status text not null,
  answer text,
  -- 'timeout' or 'ended' when closed
  reason text,
  deadline timestamptz not null,
  asked_at timestamptz not null,
  ended_at timestamptz
);
-- the sweeper closes waiting questions past their deadline
create index questions_waiting_deadline on questions (deadline) where status = 'waiting';
