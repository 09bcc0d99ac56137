-- A2A 1.0 ListTasks (docs/a2a.md): a person's tasks in a workspace, newest status first, a page at
-- a time after a (updated_at, task_id) cursor.
create index a2a_tasks_person_updated on a2a_tasks (workspace_id, user_id, updated_at desc, task_id desc);
