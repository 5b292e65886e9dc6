package dev.fencing.shedlock;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.rule.StaleTokenException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;

import java.sql.Timestamp;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The proof in one JVM: two scheduler instances (two Spring contexts with their own pools) on PostgreSQL
 * run one {@code @SchedulerLock} job. Instance A's run pauses (a latch) past {@code lockAtMostFor}; ShedLock hands
 * the lock to instance B, whose run writes; A wakes and writes. Without the fence A's write lands over B's; with
 * {@code @EnableSchedulerLockFencing} it is refused with a {@link StaleTokenException} and the row keeps B's value.
 */
class TwoSchedulersTest {

    private final SchedulerApp.Tables tables = SchedulerApp.Tables.unique();
    private HikariDataSource admin;
    private JdbcTemplate jdbc;

    @BeforeEach
    void createTables() {
        admin = SchedulerApp.pool();
        jdbc = new JdbcTemplate(admin);
        tables.create(jdbc);
    }

    @AfterEach
    void dropTables() {
        try {
            tables.drop(jdbc);
        } finally {
            admin.close();
        }
    }

    @Test
    void withoutTheFenceTheZombieRunOverwritesTheNewerOne() throws Exception {
        Race race = race(false);
        assertThat(race.zombie.failure).isNull();
        assertThat(race.zombie.token).isNull();
        assertThat(LedgerRows.value(jdbc, tables.data())).as("the zombie's write landed").isEqualTo("A");
    }

    @Test
    void withTheFenceTheZombieRunIsRefusedAndTheNewerWriteStays() throws Exception {
        Race race = race(true);
        assertThat(race.zombie.token.value()).isLessThan(race.newer.token.value());
        // the run outlived lockAtMostFor: its own process knows the lock is lost and refuses it before the store
        assertThat(race.zombie.failure).isInstanceOfSatisfying(StaleTokenException.class, e -> {
            assertThat(e.resource()).isEqualTo("ledger");
            assertThat(e.lockLost()).isTrue();
            assertThat(e.presented().value()).isEqualTo(race.zombie.token.value());
        });
        assertThat(LedgerRows.value(jdbc, tables.data())).isEqualTo("B");
        assertThat(jdbc.queryForObject("SELECT token FROM " + tables.data() + " WHERE id = 1", Long.class))
                .isEqualTo(race.newer.token.value());
    }

    private record Race(JobControl zombie, JobControl newer) {
    }

    /** A's run starts and pauses; B starts, waits out lockAtMostFor, runs and writes; then A wakes and writes. */
    private Race race(boolean fenced) throws Exception {
        CountDownLatch wake = new CountDownLatch(1);
        JobControl zombie = new JobControl("A", () -> await(wake));
        JobControl newer = new JobControl("B", () -> { });
        try (SchedulerApp a = new SchedulerApp(tables, fenced, zombie)) {
            try {
                assertThat(zombie.started.await(30, TimeUnit.SECONDS)).as("A's run started").isTrue();
                Timestamp heldUntil = tables.lockTimes(jdbc)[0];
                try (SchedulerApp b = new SchedulerApp(tables, fenced, newer)) {
                    assertThat(newer.done.await(30, TimeUnit.SECONDS)).as("B's run ended").isTrue();
                    assertThat(newer.failure).isNull();
                    // by the database's clock, which ShedLock's times are on: no margin for this JVM's pauses needed
                    assertThat(tables.lockTimes(jdbc)[1]).as("B locked only after A's lockAtMostFor")
                            .isAfterOrEqualTo(heldUntil);
                    assertThat(LedgerRows.value(jdbc, tables.data())).isEqualTo("B");
                }
            } finally {
                wake.countDown();
            }
            assertThat(zombie.done.await(30, TimeUnit.SECONDS)).as("A's run ended").isTrue();
        }
        return new Race(zombie, newer);
    }

    static void await(CountDownLatch latch) {
        try {
            if (!latch.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never woken");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
