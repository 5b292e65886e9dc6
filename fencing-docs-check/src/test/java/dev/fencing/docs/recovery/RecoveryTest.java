package dev.fencing.docs.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.docs.Databases;
import dev.fencing.issuer.Lease;
import dev.fencing.jdbc.JdbcFenceAdmin;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.recovery.MaxSeenReset;
import dev.fencing.recovery.ResetResult;
import dev.fencing.rule.OutOfRangeTokenException;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The code of docs/operations.md on the bounded advance and the way back, run on H2. */
class RecoveryTest {

    private final DataSource dataSource = Databases.h2("recovery", "schema-h2.sql", "lease-h2.sql");

    @Test
    void theBoundRefusesAForgedJump() throws Throwable {
        // tag::max-advance[]
        JdbcFenceStore store = JdbcFenceStore.builder(dataSource)
                .maxAdvance(10_000)   // a token more than 10 000 above max_seen is refused as out-of-range
                .build();
        // end::max-advance[]
        store.fence("accounts:42", new FencingToken("accounts:42", 7, "a"), () -> null);
        assertThatThrownBy(() -> store.fence("accounts:42",
                new FencingToken("accounts:42", Long.MAX_VALUE, "evil"), () -> null))
                .isInstanceOf(OutOfRangeTokenException.class);
        assertThat(new JdbcFenceAdmin(store).maxSeen("accounts:42")).hasValue(7);
    }

    @Test
    void theResetLetsTheNextHolderIn() throws Throwable {
        JdbcFenceStore store = JdbcFenceStore.builder(dataSource).build();
        JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(dataSource).build();
        MeterRegistry meterRegistry = new SimpleMeterRegistry();
        try (Lease lease = issuer.acquire("accounts:42", Duration.ofSeconds(1))) {
            store.fence("accounts:42", lease.token(), () -> null);
        }
        store.fence("accounts:42", new FencingToken("accounts:42", Long.MAX_VALUE, "evil"), () -> null);

        // tag::reset[]
        MaxSeenReset reset = new MaxSeenReset(new JdbcFenceAdmin(store), issuer, new AdminMetrics(meterRegistry));
        ResetResult result = reset.toHighestIssued("accounts:42", "ops:alice", false); // refused while a lease is held
        // result.previous(): 9223372036854775807, result.current(): the lease row's token
        // end::reset[]

        assertThat(result.previous()).isEqualTo(Long.MAX_VALUE);
        assertThat(result.current()).isEqualTo(1);
        assertThatThrownBy(() -> store.fence("accounts:42", new FencingToken("accounts:42", 1, "jdbc-old"), () -> null))
                .isInstanceOf(dev.fencing.rule.DuplicateTokenException.class);
        try (Lease next = issuer.acquire("accounts:42", Duration.ofSeconds(1))) {
            assertThat(store.fence("accounts:42", next.token(), () -> "ok")).isEqualTo("ok");
        }
        assertThatThrownBy(() -> store.fence("accounts:42", new FencingToken("accounts:42", 1, "x"), () -> null))
                .isInstanceOf(StaleTokenException.class);
    }
}
