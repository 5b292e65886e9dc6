package dev.fencing.it.boot;

/** {@link AbstractTwoProcessesProofTest} on PostgreSQL, in a schema of its own. */
class PostgresTwoProcessesProofTest extends AbstractTwoProcessesProofTest {
    @Override
    ProofDatabase database() {
        return ProofDatabase.postgres();
    }
}
