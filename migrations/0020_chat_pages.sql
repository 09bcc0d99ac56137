-- The chat pages' reads (src/assistant/Transcripts.ts): a person's conversations and runs, a
-- conversation's thread, a run's transcript, and a workspace's pending approvals; and a
-- workspace's spend this month by day and model (spend.get).

create index conversations_workspace_id_created_by on conversations (workspace_id, created_by);
create index messages_run_id on messages (run_id);
create index runs_workspace_id_user_id_started_at on runs (workspace_id, user_id, started_at);
create index runs_conversation_id_started_at on runs (conversation_id, started_at);
create index runs_workspace_id_ended_at on runs (workspace_id, ended_at);
create index approvals_conversation_id on approvals (conversation_id);
create index approvals_parked_workspace_id on approvals (workspace_id, parked_at) where status = 'parked';
create index questions_run_id on questions (run_id);
