package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.recovery.IssuedTokens;
import dev.fencing.recovery.MaxSeenReset;
import dev.fencing.recovery.ResetRefusedException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * PostgreSQL: the reset read max_seen and the issuer's highest token, then waited for the row held by a fenced
 * transaction, and lowered whatever that transaction committed, even a token above everything the reset read: a token
 * accepted meanwhile was undone, and a zombie's older token wrote after it (a red-team review). The lowering now
 * judges max_seen on the locked row against what the reset read, and refuses.
 */
@Timeout(60)
class JdbcResetRacingAnAdvanceTest {

    private static final String R = "accounts:reset-race-1";

    private final HikariDataSource dataSource = Database.POSTGRESQL.newPool(4);
    private final String table = "reset_race_" + Long.toHexString(System.nanoTime());
    private final DataSourceTransactionManager tm = new DataSourceTransactionManager(dataSource);
    private final JdbcFenceStore store = JdbcFenceStore.builder(dataSource).table(table).transactionManager(tm)
            .createTableIfMissing(true).build();

    @AfterEach
    void drop() {
        new JdbcTemplate(dataSource).execute("DROP TABLE IF EXISTS " + table);
        dataSource.close();
    }

    @Test
    void aCheckCommittedWhileTheResetWaitsForTheRowIsNotUndone() throws Throwable {
        // a token of an old ensemble, a little ahead of the new one's sequence, locked the resource out
        store.fence(R, new FencingToken(R, 1000, "old-ensemble"), () -> null);
        AtomicLong zxid = new AtomicLong(990);
        CountDownLatch checked = new CountDownLatch(1);
        FencingToken zombie = new FencingToken(R, 1001, "z");  // took the lock, paused, lease expired
        FencingToken holder = new FencingToken(R, 1002, "h");  // took it next, writes
        CompletableFuture<?>[] writer = new CompletableFuture<?>[1];
        IssuedTokens oneSequence = new IssuedTokens() {
            @Override
            public long highestIssued(String resource) {
                long now = zxid.get();
                // the sequence moves on: H's fenced transaction checks 1002 (accepted) and commits 300 ms later
                zxid.set(1002);
                writer[0] = CompletableFuture.runAsync(() -> new TransactionTemplate(tm).executeWithoutResult(s -> {
                    try {
                        store.fence(R, holder, () -> null);
                    } catch (Throwable e) {
                        throw new IllegalStateException(e);
                    }
                    checked.countDown();
                    sleep(300);
                }));
                await(checked);
                return now;
            }

            @Override
            public boolean isHeld(String resource) {
                return false;
            }

            @Override
            public boolean oneSequence() {
                return true;
            }
        };
        MaxSeenReset reset = new MaxSeenReset(new JdbcFenceAdmin(store), oneSequence,
                new AdminMetrics(new SimpleMeterRegistry()));

        assertThatThrownBy(() -> reset.toHighestIssued(R, "ops:alice", false))
                .isInstanceOf(ResetRefusedException.class).hasMessageContaining("moved from 1000 to 1002");
        writer[0].get(10, TimeUnit.SECONDS);

        assertThatThrownBy(() -> store.fence(R, zombie, () -> "zombie wrote"))
                .as("zombie token 1001 after the holder's 1002 was accepted and committed")
                .isInstanceOf(StaleTokenException.class);
        assertThat(new JdbcFenceAdmin(store).maxSeen(R)).hasValue(1002);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(10, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
