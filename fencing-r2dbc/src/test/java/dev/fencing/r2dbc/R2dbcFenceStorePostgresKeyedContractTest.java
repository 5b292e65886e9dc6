package dev.fencing.r2dbc;

import java.util.UUID;

/**
 * {@link R2dbcFenceStorePostgresContractTest} for resources with a family ({@code contract:<uuid>}): their check is the
 * statement that reads the family floor, where the shared contract's resources take the one without.
 */
class R2dbcFenceStorePostgresKeyedContractTest extends R2dbcFenceStorePostgresContractTest {

    @Override
    protected String freshResource() {
        return "contract:" + UUID.randomUUID();
    }
}
