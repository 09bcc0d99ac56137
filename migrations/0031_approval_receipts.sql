-- A resolved approval's signed receipt (docs/audit.md, "Approval receipts"); null for approvals
-- resolved before receipts, and while parked.
alter table approvals add column receipt jsonb;
