package dev.fencing.shedlock;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;

import java.sql.Timestamp;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The proof across processes: two scheduler JVMs ({@link SchedulerProcess}) on PostgreSQL run one
 * {@code @SchedulerLock} job. Process A's run takes the lock and pauses (until a line on its stdin) past
 * {@code lockAtMostFor}; process B's run gets the lock from ShedLock and writes; A wakes and writes. With the fence
 * A is refused and the row keeps B's value; without it A's write lands. Every process is killed and reaped.
 */
class ProcessSchedulersTest {

    private static final Duration STARTUP = Duration.ofSeconds(60);

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
    void withTheFenceTheZombieProcessIsRefused() throws Exception {
        String[] outcome = race(true);
        long zombieToken = token(outcome[0]);
        long newerToken = token(outcome[1]);
        assertThat(zombieToken).isLessThan(newerToken);
        // its run outlived lockAtMostFor, so its own process knows the lock is lost and refuses the write before
        // the store (which holds the newer token and would refuse it too)
        assertThat(outcome[2]).isEqualTo("REFUSED StaleTokenException lock lost");
        assertThat(LedgerRows.value(jdbc, tables.data())).isEqualTo("B");
        assertThat(jdbc.queryForObject("SELECT token FROM " + tables.data() + " WHERE id = 1", Long.class))
                .isEqualTo(newerToken);
    }

    @Test
    void withoutTheFenceTheZombieProcessOverwritesTheNewerOne() throws Exception {
        String[] outcome = race(false);
        assertThat(outcome[0]).isEqualTo("STARTED token=none");
        assertThat(outcome[2]).isEqualTo("WROTE");
        assertThat(LedgerRows.value(jdbc, tables.data())).as("the zombie's write landed").isEqualTo("A");
    }

    /** Returns A's STARTED line, B's STARTED line and A's outcome line. */
    private String[] race(boolean fenced) throws Exception {
        try (ChildProcess a = start("A", fenced, true)) {
            String zombieStarted = a.expect("STARTED", STARTUP);
            Timestamp heldUntil = tables.lockTimes(jdbc)[0];
            String newerStarted;
            try (ChildProcess b = start("B", fenced, false)) {
                newerStarted = b.expect("STARTED", STARTUP);
                assertThat(b.expect("", Duration.ofSeconds(30))).isEqualTo("WROTE");
                // by the database's clock, which ShedLock's times are on: no margin for the processes' pauses needed
                assertThat(tables.lockTimes(jdbc)[1]).as("B locked only after A's lockAtMostFor")
                        .isAfterOrEqualTo(heldUntil);
                assertThat(b.exited(Duration.ofSeconds(30))).isTrue();
            }
            assertThat(LedgerRows.value(jdbc, tables.data())).isEqualTo("B");
            a.send("go");
            String zombieOutcome = a.expect("", Duration.ofSeconds(30));
            assertThat(a.exited(Duration.ofSeconds(30))).isTrue();
            return new String[] {zombieStarted, newerStarted, zombieOutcome};
        }
    }

    private ChildProcess start(String value, boolean fenced, boolean pause) throws Exception {
        return new ChildProcess("scheduler " + value, SchedulerProcess.class, String.valueOf(fenced), tables.shedlock(),
                tables.lease(), tables.fence(), tables.data(), value, String.valueOf(pause));
    }

    private static long token(String started) {
        return Long.parseLong(started.substring("STARTED token=".length()));
    }
}
