package dev.fencing.it.boot;

/** {@link AbstractProofTest} on MariaDB (127.0.0.1:3306, root), in a database of its own. */
class MariaDbProofTest extends AbstractProofTest {
    @Override
    ProofDatabase database() {
        return ProofDatabase.mariadb();
    }
}
