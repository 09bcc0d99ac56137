-- The enable gate covers changes (issue 22): each change of an automation's trigger or steps is a
-- new revision, which runs only once a person enabled it, with that person's rights.
alter table automations
  -- 1 on creation, +1 per change of the trigger or steps
  add column revision integer not null default 1,
  -- the person who enabled the current revision (null while disabled)
  add column enabled_by text,
  -- the revision they enabled
  add column enabled_revision integer;
-- as the automation's state reads what was stored before: enabled at creation and never changed
-- since, its owner's session enabled it; any other enabled one waits for a person to enable it anew
update automations set enabled_by = run_as->>'userId', enabled_revision = 1 where enabled and version = 1;
