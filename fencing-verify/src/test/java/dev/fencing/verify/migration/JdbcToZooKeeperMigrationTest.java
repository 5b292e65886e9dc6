package dev.fencing.verify.migration;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.jdbc.JdbcFenceAdmin;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcIssuerBase;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.verify.database.Database;
import dev.fencing.zookeeper.ZooKeeperTokenIssuer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Moving from the JDBC lease (per-resource counters) to ZooKeeper (czxids of one ensemble-wide sequence) on a live
 * system, through one {@link JdbcFenceStore} on PostgreSQL: with the offset (base stored in a
 * {@link JdbcIssuerBase} table, checked against the fence table's highest max_seen) the switch is safe in the
 * interleaving of a client on each issuer; without it, the new issuer's writes are refused as stale.
 */
class JdbcToZooKeeperMigrationTest {

    private static final int A_ROUNDS = 40;

    private HikariDataSource dataSource;
    private final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private final String fenceTable = "migration_fence_" + suffix;
    private final String leaseTable = "migration_lease_" + suffix;
    private final String baseTable = "migration_base_" + suffix;
    private JdbcFenceStore store;
    private JdbcTokenIssuer a;
    private TestingServer zooKeeper;
    private CuratorFramework client;
    private ZooKeeperTokenIssuer b;
    private final List<String> resources = List.of("accounts:" + suffix + ":1", "accounts:" + suffix + ":2");

    @BeforeEach
    void start() throws Exception {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(Database.POSTGRESQL_TEST_URL);
        config.setUsername("postgres");
        config.setMaximumPoolSize(6);
        dataSource = new HikariDataSource(config);
        store = JdbcFenceStore.builder(dataSource).table(fenceTable).createTableIfMissing(true).build();
        a = JdbcTokenIssuer.builder(dataSource).table(leaseTable).createTableIfMissing(true)
                .leaseTime(Duration.ofSeconds(30)).build();
        zooKeeper = new TestingServer(true);
        client = CuratorFrameworkFactory.newClient(zooKeeper.getConnectString(), new RetryNTimes(3, 100));
        client.start();
        b = new ZooKeeperTokenIssuer(client, "/fencing-migration", null);
    }

    @AfterEach
    void stop() throws Exception {
        b.close();
        client.close();
        zooKeeper.close();
        JdbcTemplate jdbc = new JdbcTemplate(dataSource);
        for (String table : List.of(fenceTable, leaseTable, baseTable)) {
            jdbc.execute("DROP TABLE IF EXISTS " + table);
        }
        dataSource.close();
    }

    /** The procedure's base: above the fence table's highest max_seen and A's highest, with headroom. */
    private long chooseBase(JdbcFenceAdmin admin) {
        long highest = admin.highestMaxSeen().orElse(0);
        for (String resource : resources) {
            highest = Math.max(highest, a.highestIssued(resource));
        }
        return highest + 1_000_000;
    }

    @Test
    void withTheOffsetTheSwitchKeepsTheStoredOrderAndRefusesNothingOfB() throws Exception {
        Cutover cutover = new Cutover(store, resources);
        cutover.aloneOn("A", a, A_ROUNDS);
        JdbcFenceAdmin admin = new JdbcFenceAdmin(store);
        long base = chooseBase(admin);
        TokenIssuer offset = OffsetTokenIssuer.establish(b, new JdbcIssuerBase(dataSource, baseTable, true),
                "jdbc-to-zookeeper", base, admin);

        cutover.sideBySide(a, offset, 10, 20);

        cutover.assertSafeSwitch();
        assertThat(cutover.refusedOf("A"))
                .as("the clients overlapped: A's late writes are refused as stale once B wrote")
                .isNotEmpty().allMatch(Cutover.Refused::stale);
        // a restart of an instance configured with a mistyped base refuses to start
        assertThatThrownBy(() -> OffsetTokenIssuer.establish(b, new JdbcIssuerBase(dataSource, baseTable),
                "jdbc-to-zookeeper", base / 10, admin)).isInstanceOf(FencingConfigurationException.class);
    }

    @Test
    void withoutTheOffsetTheSameSwitchRefusesBsWritesAsStale() throws Exception {
        Cutover cutover = new Cutover(store, resources);
        cutover.aloneOn("A", a, A_ROUNDS);
        long aHighest = new JdbcFenceAdmin(store).highestMaxSeen().orElseThrow();
        assertThat(b.highestIssued(resources.get(0))).as("the fresh ensemble's zxid is below A's tokens")
                .isLessThan(aHighest);

        cutover.sideBySide(a, b, 10, 5);

        assertThat(cutover.refusedOf("B")).as("the problem is real: B's tokens are stale").isNotEmpty()
                .anyMatch(Cutover.Refused::stale);
    }
}
