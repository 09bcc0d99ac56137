-- A2A tasks (docs/a2a.md), projected by the a2atask actor: one full row per task, which tasks/get
-- returns as an A2A v0.3 Task. Ids are text: a malformed id is simply not found. No unique index
-- beyond the primary key: a duplicate would jam the projection's partition.

create table a2a_tasks (
  -- a2a_<32 hex>
  task_id text primary key,
  -- ctx_<32 hex>: the conversation its turns share
  context_id text not null,
  org_id text not null,
  workspace_id text not null,
  -- the person behind the caller: the only one who may continue the task
  user_id text not null,
  api_key_id text,
  -- the conversation of the turn (cnv_ public id or UUID)
  conversation_id text not null,
  -- the turn's id (UUID): a cancel stops the turn by it
  turn_id text not null,
  -- tse_ run, once the turn started
  run_id text,
  -- 'submitted', 'working', 'input-required', 'completed', 'canceled', 'failed' or 'rejected'
  state text not null,
  -- A2A status.message, an A2A Message or null
  status_message jsonb,
  -- A2A Messages, oldest first
  history jsonb not null,
  -- A2A Artifacts
  artifacts jsonb not null,
  -- while input-required: the conversation's question the caller's next message answers
  pending_question_id text,
  created_at timestamptz not null,
  -- when the status last changed (A2A status.timestamp)
  updated_at timestamptz not null
);
-- tasks/get and tasks/cancel find a task within the caller's workspace
create index a2a_tasks_workspace_id_task_id on a2a_tasks (workspace_id, task_id);
-- the tasks of one context
create index a2a_tasks_context_id on a2a_tasks (context_id);
