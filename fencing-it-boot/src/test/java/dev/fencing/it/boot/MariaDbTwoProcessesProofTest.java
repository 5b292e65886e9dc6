package dev.fencing.it.boot;

/** {@link AbstractTwoProcessesProofTest} on MariaDB, in a database of its own. */
class MariaDbTwoProcessesProofTest extends AbstractTwoProcessesProofTest {
    @Override
    ProofDatabase database() {
        return ProofDatabase.mariadb();
    }
}
