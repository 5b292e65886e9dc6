-- The statements of docs/operations.md, "A family floor no issuer reached" (PostgreSQL), as the runbook shows them;
-- FamilyFloorRecoveryTest runs them with its own table names and family.
-- tag::lower[]
UPDATE fencing_max_seen SET max_seen = 4611686018427387904 WHERE resource = 'accounts' || chr(31);
UPDATE fencing_lease    SET token    = 4611686018427387904 WHERE resource = chr(1) || 'accounts';
-- end::lower[]
