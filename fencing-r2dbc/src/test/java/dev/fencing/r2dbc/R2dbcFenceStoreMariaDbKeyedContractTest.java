package dev.fencing.r2dbc;

import dev.fencing.store.sql.FenceSql;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link R2dbcFenceStoreMariaDbContractTest} for resources with a family ({@code contract:<uuid>}): their check is the
 * statement that reads the family floor, where the shared contract's resources take the one without.
 */
class R2dbcFenceStoreMariaDbKeyedContractTest extends R2dbcFenceStoreMariaDbContractTest {

    @Override
    protected String freshResource() {
        return "contract:" + UUID.randomUUID();
    }

    /**
     * The family's first check has its floor row created in the background, holding 0 (no floor: a first token of
     * any value is accepted), so that later checks' locking read of it locks that row, not the gap before the
     * family's first resource (see the JDBC store's MariaDbFloorRowTest).
     */
    @Test
    void theFirstCheckOfAFamilyCreatesItsFloorRowWhichIsNoFloor() throws InterruptedException {
        String family = "fam" + UUID.randomUUID().toString().substring(0, 8);
        inUnitOfWork(store.fence(family + ":1", token(family + ":1", 9, "a"), Flux.just("w"))).blockLast(STEP);
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!store.hasFloorRow(family)) {
            assertThat(System.nanoTime()).as("the floor row created within 10 s").isLessThan(deadline);
            Thread.sleep(10);
        }
        Long floor = db.sql("SELECT max_seen FROM " + fenceTable + " WHERE resource = ?")
                .bind(0, FenceSql.familyFloorKey(family)).map((row, meta) -> row.get(0, Long.class)).one()
                .block(STEP);
        assertThat(floor).isZero();
        inUnitOfWork(store.fence(family + ":2", token(family + ":2", 1, "b"), Flux.just("w"))).blockLast(STEP);
    }
}
