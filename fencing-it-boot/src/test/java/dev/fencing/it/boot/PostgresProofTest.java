package dev.fencing.it.boot;

/** {@link AbstractProofTest} on PostgreSQL (127.0.0.1:5432, database test), in a schema of its own. */
class PostgresProofTest extends AbstractProofTest {
    @Override
    ProofDatabase database() {
        return ProofDatabase.postgres();
    }
}
