-- An organization's text model tiers and the model provider keys it pays with (actor `models`).

create table model_tiers (
  org_id text not null,
  slug text not null,
  -- '<family>:<model>'; null: the tier names no model yet (turns on it are refused)
  model text,
  -- true: the operator's key pays; false: the organization's own key for the model's family
  shared_key boolean not null,
  archived boolean not null,
  -- at most one live tier per organization; turns that name no tier run on it
  is_default boolean not null,
  updated_at timestamptz not null,
  primary key (org_id, slug)
);

create table model_keys (
  org_id text not null,
  -- 'openai' or 'anthropic'
  family text not null,
  -- sealed with the platform key; the raw key is never stored
  api_key_sealed text not null,
  -- last four characters, for the Owner to tell keys apart
  key_hint text,
  -- null: the family's public API
  base_url text,
  -- the only models (names of the family) the key may run; null: any
  models jsonb,
  set_at timestamptz not null,
  primary key (org_id, family)
);
