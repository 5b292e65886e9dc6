package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.metrics.AdminMetrics;
import dev.fencing.recovery.FloorRaise;
import dev.fencing.recovery.FloorRaiseResult;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.jdbc.core.JdbcTemplate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The issuer base table on a database: a base is stored once per migration name, by whichever instance comes first,
 * and never changed; the table is checked when built. Also the fence table's listing ({@link JdbcFenceAdmin} as
 * {@link dev.fencing.recovery.FenceInventory}) and the floor raise after restoring an older copy of the fence table.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class JdbcIssuerBaseContract {

    private HikariDataSource dataSource;
    private JdbcTemplate jdbc;
    private final List<String> tables = new ArrayList<>();
    private String baseTable;
    private JdbcIssuerBase bases;

    abstract Database database();

    @BeforeAll
    void create() {
        dataSource = database().newPool(6);
        jdbc = new JdbcTemplate(dataSource);
        baseTable = table("base");
        bases = new JdbcIssuerBase(dataSource, baseTable, true);
    }

    @AfterAll
    void drop() {
        for (String table : tables) {
            jdbc.execute("DROP TABLE IF EXISTS " + table);
        }
        dataSource.close();
    }

    private String table(String prefix) {
        String table = Database.uniqueTable(prefix);
        tables.add(table);
        return table;
    }

    private static String fresh() {
        return "migration-" + UUID.randomUUID();
    }

    @Test
    void aBaseIsStoredOnceAndNeverChanged() {
        String name = fresh();
        assertThat(bases.stored(name)).isEmpty();
        assertThat(bases.establish(name, 5_000)).isEqualTo(5_000);
        assertThat(bases.establish(name, 7)).as("the first base stays").isEqualTo(5_000);
        assertThat(new JdbcIssuerBase(dataSource, baseTable).stored(name)).as("another instance reads it")
                .hasValue(5_000);
        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + baseTable + " WHERE name = ?", Integer.class, name))
                .isEqualTo(1);
    }

    @Test
    void everyStoredBaseIsListedOldestFirst() throws InterruptedException {
        JdbcIssuerBase listed = new JdbcIssuerBase(dataSource, table("base_list"), true);
        assertThat(listed.storedBases()).isEmpty();
        listed.establish("z-first", 9_000);
        Thread.sleep(20); // a later created_at than the first row's, at the columns' microsecond precision
        listed.establish("a-second", 2_000);
        listed.establish("z-first", 1); // already stored: unchanged, still first
        assertThat(new JdbcIssuerBase(dataSource, listed.table()).storedBases())
                .containsExactly(Map.entry("z-first", 9_000L), Map.entry("a-second", 2_000L));
    }

    @Test
    void concurrentFirstStartsAgreeOnOneBase() throws Exception {
        String name = fresh();
        int instances = 4;
        ExecutorService pool = Executors.newFixedThreadPool(instances);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Long>> results = new ArrayList<>();
        for (int i = 0; i < instances; i++) {
            long base = 1_000 + i;
            JdbcIssuerBase instance = new JdbcIssuerBase(dataSource, baseTable);
            results.add(pool.submit(() -> {
                start.await();
                return instance.establish(name, base);
            }));
        }
        start.countDown();
        List<Long> stored = new ArrayList<>();
        for (Future<Long> result : results) {
            stored.add(result.get(30, TimeUnit.SECONDS));
        }
        pool.shutdownNow();
        assertThat(stored).hasSize(instances).containsOnly(stored.get(0));
        assertThat(stored.get(0)).isBetween(1_000L, 1_000L + instances - 1);
        assertThat(bases.stored(name)).hasValue(stored.get(0));
    }

    @Test
    void theOffsetRefusesToStartOnAnotherBase() {
        String name = fresh();
        JdbcTokenIssuer lease = JdbcTokenIssuer.builder(dataSource).table(table("lease")).createTableIfMissing(true)
                .build();
        OffsetTokenIssuer.establish(lease, bases, name, 2_000, null);
        assertThatThrownBy(() -> OffsetTokenIssuer.establish(lease, new JdbcIssuerBase(dataSource, baseTable), name,
                200, null))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("configured base 200").hasMessageContaining("stored base 2000");
    }

    @Test
    void aMissingTableOrBadInputFailsClearly() {
        assertThatThrownBy(() -> new JdbcIssuerBase(dataSource, "no_such_base_table_" + System.nanoTime()))
                .isInstanceOf(FencingConfigurationException.class)
                .hasMessageContaining("no_such_base_table_").hasMessageContaining("issuer-base-");
        assertThatThrownBy(() -> new JdbcIssuerBase(dataSource, "bad;name"))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("bad;name");
        assertThatThrownBy(() -> bases.establish(" ", 5)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> bases.establish("m", 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'m'").hasMessageContaining("0");
        assertThat(bases.stored("m")).isEmpty();
    }

    /**
     * Callers bounding a reset by the stored bases read "none" only from a table the database says is missing: a
     * table of another shape (or a database that cannot be read) is an error, not an absence of migrations.
     */
    @Test
    void storedBasesIfPresentIsEmptyOnlyForAMissingTable() {
        String name = fresh();
        bases.establish(name, 77);
        assertThat(JdbcIssuerBase.storedBasesIfPresent(dataSource, baseTable)).hasValueSatisfying(
                stored -> assertThat(stored).containsEntry(name, 77L));
        assertThat(JdbcIssuerBase.storedBasesIfPresent(dataSource, "no_such_base_table_" + System.nanoTime()))
                .isEmpty();
        assertThat(JdbcIssuerBase.storedBasesIfPresent(dataSource, "no_such_schema_" + System.nanoTime() + ".bases"))
                .isEmpty();
        String misshapen = table("misshapen");
        jdbc.execute("CREATE TABLE " + misshapen + " (name VARCHAR(64) PRIMARY KEY, amount BIGINT)");
        assertThatThrownBy(() -> JdbcIssuerBase.storedBasesIfPresent(dataSource, misshapen))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining(misshapen)
                .hasMessageContaining("lacks the columns name, base, created_at");
    }

    /**
     * A move away from the JDBC lease must put its base above every token the lease table handed out, presented to a
     * fence store or not: the table's highest token, family floors included, read without an issuer.
     */
    @Test
    void theLeaseTablesHighestTokenIsReadWithoutAnIssuer() {
        String leaseTable = table("lease");
        JdbcTokenIssuer lease = JdbcTokenIssuer.builder(dataSource).table(leaseTable).createTableIfMissing(true)
                .leaseTime(Duration.ofSeconds(30)).build();
        assertThat(JdbcTokenIssuer.highestInTable(dataSource, leaseTable)).as("no row yet").isEmpty();
        String r = "orders:" + UUID.randomUUID();
        lease.acquire(r, Duration.ofSeconds(5)).close();
        try (Lease unpresented = lease.acquire(r, Duration.ofSeconds(5))) { // never shown to a fence store
            assertThat(JdbcTokenIssuer.highestInTable(dataSource, leaseTable))
                    .hasValue(unpresented.token().value());
        }
        lease.raiseFamilyFloor("orders", 40);
        assertThat(JdbcTokenIssuer.highestInTable(dataSource, leaseTable)).hasValue(40);
        assertThat(JdbcTokenIssuer.highestInTable(dataSource, "no_such_lease_" + System.nanoTime())).isEmpty();
        String misshapen = table("misshapen");
        jdbc.execute("CREATE TABLE " + misshapen + " (resource VARCHAR(64) PRIMARY KEY, amount BIGINT)");
        assertThatThrownBy(() -> JdbcTokenIssuer.highestInTable(dataSource, misshapen))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining(misshapen);
        assertThatThrownBy(() -> JdbcTokenIssuer.highestInTable(dataSource, "bad;name"))
                .isInstanceOf(FencingConfigurationException.class).hasMessageContaining("bad;name");
    }

    @Test
    void theFenceTableIsListedInPagesAndKnowsItsHighest() throws Throwable {
        JdbcFenceStore store = JdbcFenceStore.builder(dataSource).table(table("fence")).createTableIfMissing(true)
                .build();
        JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
        assertThat(admin.highestMaxSeen()).isEmpty();
        for (String r : List.of("c", "a", "b", "d")) {
            store.fence(r, new FencingToken(r, r.charAt(0), "h"), () -> null);
        }
        assertThat(admin.resources(null, 3)).containsExactly("a", "b", "c");
        assertThat(admin.resources("c", 3)).containsExactly("d");
        assertThat(admin.highestMaxSeen()).hasValue('d');
    }

    /**
     * A key created after the backup has no row in the restored table: the raise gives its family a floor (from the
     * families of the keys it lists), which the check reads, so the key's zombie is refused (on MariaDB, where a
     * check leaves a floor row holding 0, too: it was taken for a floor and skipped).
     */
    @Test
    void theFloorRaiseGivesTheFamiliesOfTheListedKeysAFloorThatANewKeysCheckReads() throws Throwable {
        String fenceTable = table("fence");
        JdbcFenceStore store = JdbcFenceStore.builder(dataSource).table(fenceTable).createTableIfMissing(true)
                .build();
        String family = "f" + UUID.randomUUID().toString().replace("-", "");
        store.fence(family + ":1", new FencingToken(family + ":1", 5, "in the backup"), () -> null);
        FloorRaise raise = new FloorRaise(new JdbcFenceAdmin(store), new JdbcFenceAdmin(store), null,
                new AdminMetrics(null));

        FloorRaiseResult result = raise.raiseAll(100, "ops");

        assertThat(result.raised()).as("the key and its family's floor").isEqualTo(2);
        assertThatThrownBy(() -> store.fence(family + ":2", new FencingToken(family + ":2", 50, "zombie"),
                () -> null)).isInstanceOf(TokenRejectedException.class);
        assertThat(store.fence(family + ":2", new FencingToken(family + ":2", 101, "next"), () -> "written"))
                .isEqualTo("written");
        assertThat(raise.raiseAll(100, "ops").raised()).as("idempotent").isZero();
    }

    @Test
    void afterRestoringAnOlderCopyTheFloorRaiseRefusesTheZombieAndKeepsTheHolder() throws Throwable {
        String fenceTable = table("fence");
        String backup = table("backup");
        JdbcFenceStore store = JdbcFenceStore.builder(dataSource).table(fenceTable).createTableIfMissing(true)
                .build();
        JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(dataSource).table(table("lease"))
                .createTableIfMissing(true).leaseTime(Duration.ofSeconds(30)).build();
        String r = "accounts:" + UUID.randomUUID();
        String quiet = "accounts:" + UUID.randomUUID();
        try (Lease first = issuer.acquire(r, Duration.ofSeconds(5));
             Lease other = issuer.acquire(quiet, Duration.ofSeconds(5))) {
            store.fence(r, first.token(), () -> null);
            store.fence(quiet, other.token(), () -> null);
        }
        jdbc.execute("CREATE TABLE " + backup + " AS SELECT * FROM " + fenceTable); // the backup
        FencingToken zombie;
        try (Lease second = issuer.acquire(r, Duration.ofSeconds(5))) {
            zombie = second.token();
            store.fence(r, zombie, () -> null);
        } // its holder paused; the token lives on
        try (Lease current = issuer.acquire(r, Duration.ofSeconds(5))) {
            store.fence(r, current.token(), () -> null);
            jdbc.execute("DELETE FROM " + fenceTable); // the restore of the older copy
            jdbc.execute("INSERT INTO " + fenceTable + " SELECT * FROM " + backup);
            assertThat(new JdbcFenceAdmin(store).maxSeen(r).orElseThrow()).as("the hole the restore opened")
                    .isLessThan(zombie.value());

            FloorRaise raise = new FloorRaise(new JdbcFenceAdmin(store), new JdbcFenceAdmin(store), issuer,
                    new AdminMetrics(null));
            FloorRaiseResult result = raise.raiseAll(0, "ops");

            assertThat(result.examined()).as("r, quiet and their family's floor").isEqualTo(3);
            assertThat(result.raised()).isEqualTo(1); // `quiet` had no token since the backup; the family no floor
            assertThatThrownBy(() -> store.fence(r, zombie, () -> null))
                    .isInstanceOf(TokenRejectedException.class);
            assertThat(store.fence(r, current.token(), () -> "written")).isEqualTo("written");
            assertThat(raise.raiseAll(0, "ops").raised()).as("idempotent").isZero();
        }
    }
}
