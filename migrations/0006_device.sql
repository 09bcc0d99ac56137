-- CLI device logins: a user code is unique only among live device logins. The application makes a
-- new code unique among those; a unique index over every login ever made would instead jam the
-- projection's partition on a rare duplicate (as for slugs and emails).
alter table device_authorizations drop constraint device_authorizations_user_code_key;
create index device_authorizations_user_code on device_authorizations (user_code);

-- when a person approved or denied the login, and when the CLI collected its credential
alter table device_authorizations add column decided_at timestamptz;
alter table device_authorizations add column redeemed_at timestamptz;
