-- Workspace documents (actors/document): each at its latest version, and every version's text.
create table documents (
  -- doc_<32 hex>
  document_id text primary key,
  org_id text not null,
  workspace_id text not null,
  title text not null,
  version integer not null,
  created_by text not null,
  created_at timestamptz not null,
  updated_by text not null,
  updated_at timestamptz not null
);
create index documents_by_workspace on documents (workspace_id, updated_at desc, document_id);

create table document_versions (
  document_id text not null,
  version integer not null,
  title text not null,
  -- Markdown
  content text not null,
  user_id text not null,
  created_at timestamptz not null,
  primary key (document_id, version)
);
