-- Read models of the schema registry (actors/schema) and of workspace nodes (actors/node).

-- The current definition of each label of a workspace.
CREATE TABLE schema_labels (
  workspace_id text NOT NULL,
  label text NOT NULL,
  properties jsonb NOT NULL,
  version integer NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, label)
);

-- Live nodes; a deleted node has no row.
CREATE TABLE nodes (
  node_id text PRIMARY KEY,
  workspace_id text NOT NULL,
  label text NOT NULL,
  properties jsonb NOT NULL,
  version integer NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

-- Keyset pagination: nodes of one label, and all nodes of a workspace, ordered by id.
CREATE INDEX nodes_workspace_label_node_idx ON nodes (workspace_id, label, node_id);
CREATE INDEX nodes_workspace_node_idx ON nodes (workspace_id, node_id);
