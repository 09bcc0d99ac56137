-- Each person's data key (docs/audit.md, "Erasure by crypto-shredding"), wrapped by the master key
-- through the key-management port. Not a read model: no event holds a key, a replay rebuilds none,
-- and erasing a person deletes their rows, after which what was sealed under them cannot be opened.
create table person_keys (
  -- `pk_<32 hex>`: what a sealed value names
  key_ref text primary key,
  user_id text not null unique,
  -- the master key's label (the envelope's `token_kms_key_id`)
  kms_key_id text not null,
  wrapped_key text not null,
  created_at timestamptz not null default now()
);
