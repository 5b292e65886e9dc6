package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.issuer.Lease;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.recovery.FloorRaise;
import dev.fencing.retention.IssuerFloors;
import dev.fencing.store.sql.FenceSql;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.jdbc.core.JdbcTemplate;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A family with a ':' of its own ({@code orders:eu}, of keys {@code orders:eu:7}) has the
 * floor key {@code orders:eu} + U+001F, whose own "family" by the last ':' is {@code orders}. Raising that floor
 * through {@link JdbcFenceAdmin#raiseFloor} runs the check statement on the floor key, which joins the floor row of
 * {@code orders}: a missing {@code orders:eu} floor row was created at the {@code orders} floor, not at the value
 * asked (a red-team review), and after the floor raise every new key of {@code orders:eu} was refused.
 */
@Timeout(60)
class NestedFamilyFloorRaiseTest {

    private HikariDataSource dataSource;
    private final List<String> tables = new java.util.ArrayList<>();

    @AfterEach
    void drop() {
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        tables.forEach(t -> jdbc.execute("DROP TABLE IF EXISTS " + t));
        dataSource.close();
    }

    private String table(String what) {
        String t = "nested_floor_" + what + "_" + Long.toHexString(System.nanoTime());
        tables.add(t);
        return t;
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void raisingANestedFamilysFloorRaisesItToTheValueAsked(Database database) {
        dataSource = database.newPool(4);
        JdbcFenceStore store = JdbcFenceStore.builder(dataSource).table(table("fence")).createTableIfMissing(true)
                .build();
        JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
        admin.raiseFloor(FenceSql.familyFloorKey("orders"), 50); // family 'orders' compacted at 50

        admin.raiseFloor(FenceSql.familyFloorKey("orders:eu"), 5);

        assertThat(admin.familyFloor("orders:eu")).as("floor of family orders:eu, raised to 5").hasValue(5);
    }

    /**
     * The floor raise after a restore, with the JDBC lease as issuer and a value: the lease's floor of
     * {@code orders:eu} goes to 5, the store's to 50 (the floor of {@code orders}), and every new key of
     * {@code orders:eu} is refused as stale until its own counter passes 50.
     */
    @Test
    void afterTheFloorRaiseANewKeyOfTheNestedFamilyWritesWithItsNextToken() throws Throwable {
        dataSource = Database.POSTGRESQL.newPool(4);
        JdbcFenceStore store = JdbcFenceStore.builder(dataSource).table(table("fence")).createTableIfMissing(true)
                .build();
        JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(dataSource).table(table("lease")).createTableIfMissing(true)
                .leaseTime(Duration.ofSeconds(30)).build();
        JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
        // family 'orders': busy keys, folded by compaction at 50
        for (int i = 0; i < 50; i++) {
            try (Lease lease = issuer.acquire("orders:1", Duration.ofSeconds(5))) {
                store.fence("orders:1", lease.token(), () -> null);
            }
        }
        assertThat(admin.compact(Duration.ZERO, 100, issuer).folded()).isEqualTo(1);
        assertThat(admin.familyFloor("orders")).hasValue(50);
        // family 'orders:eu' (a key with a region): one write
        try (Lease lease = issuer.acquire("orders:eu:7", Duration.ofSeconds(5))) {
            store.fence("orders:eu:7", lease.token(), () -> null);
        }

        // the table was restored; the floor raise, at least 5
        new FloorRaise(admin, admin, issuer, new AdminMetrics(new SimpleMeterRegistry())).raiseAll(5, "ops:alice");

        try (Lease lease = issuer.acquire("orders:eu:8", Duration.ofSeconds(5))) {
            FencingToken token = lease.token();
            assertThat(token.value()).isEqualTo(6);
            assertThat(store.fence("orders:eu:8", token, () -> "written"))
                    .as("a new key of orders:eu with the issuer's next token, above the floor raised to 5")
                    .isEqualTo("written");
        }
    }
}
