-- Notifications of spec 2.9 (issue 13): the notice's in-app route and email mirror beside the
-- content 0012 holds, the recipient's marks apart, and the organization's re-authentication alert
-- setting. Run notices (`automation_run`'s projection) and the notification actor's notices share
-- `notifications`; the marks are the notification actor's alone, so that neither projection
-- overwrites the other's columns, in whatever order their partitions are replayed.
alter table notifications add column deep_link text, add column emailed_at timestamptz;
create index notifications_org_user on notifications (org_id, user_id, created_at desc);

-- A person's marks of a notice of theirs; no row: unread and not archived.
create table notification_marks (
  notification_id text primary key,
  user_id text not null,
  unread boolean not null default true,
  archived boolean not null default false,
  marked_at timestamptz
);

-- mcp_auth_alerts (spec 2.9's org setting); no row: send_email true, roles Owner and Admin.
create table mcp_auth_alerts (
  org_id text primary key,
  send_email boolean not null,
  -- ["Owner", "Admin", "Member", "Viewer"]
  roles jsonb not null,
  updated_at timestamptz not null
);
