-- Uploaded attachments (docs/chat.md), projected by the file actor: what each file is and whose.
-- The bytes are not here: they live in `<schema>_files.file_contents` (src/assistant/Files.ts),
-- a schema a replay never drops, since the log does not carry them.
create table files (
  -- gen_<32 hex>
  file_id text primary key,
  org_id text not null,
  workspace_id text not null,
  -- the uploading person (a key's creator)
  user_id text not null,
  name text not null,
  -- type/subtype, one of the allowed types
  media_type text not null,
  size bigint not null,
  -- hex SHA-256 of the bytes
  sha256 text not null,
  uploaded_at timestamptz not null
);
