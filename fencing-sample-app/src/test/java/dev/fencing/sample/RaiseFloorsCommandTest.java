package dev.fencing.sample;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.jdbc.JdbcFenceAdmin;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcIssuerBase;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.rule.TokenRejectedException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SimpleDriverDataSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code --admin raise-floors} on PostgreSQL: restore a copy of the fence table taken before some writes, run the
 * command, and the zombie's newer token is refused while the current holder's is accepted.
 */
class RaiseFloorsCommandTest {

    private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    private final String fenceTable = "raise_fence_" + suffix;
    private final String backupTable = "raise_backup_" + suffix;
    private final String leaseTable = "raise_lease_" + suffix;
    private final String baseTable = "raise_base_" + suffix;
    private final String resource = "accounts:" + suffix;
    private SimpleDriverDataSource dataSource;
    private JdbcTemplate jdbc;
    private JdbcFenceStore store;
    private JdbcTokenIssuer issuer;

    @BeforeEach
    void tables() throws Exception {
        dataSource = new SimpleDriverDataSource(DriverManager.getDriver(URL), URL, "postgres", "");
        jdbc = new JdbcTemplate(dataSource);
        store = JdbcFenceStore.builder(dataSource).table(fenceTable).createTableIfMissing(true).build();
        issuer = JdbcTokenIssuer.builder(dataSource).table(leaseTable).createTableIfMissing(true)
                .leaseTime(Duration.ofSeconds(30)).build();
    }

    @AfterEach
    void dropTables() {
        for (String table : new String[] {fenceTable, backupTable, leaseTable, baseTable}) {
            jdbc.execute("DROP TABLE IF EXISTS " + table);
        }
    }

    private int run(String... extra) throws Throwable {
        String[] base = {"--admin", "raise-floors", "--jdbc-url", URL, "--fence-table", fenceTable};
        String[] args = new String[base.length + extra.length];
        System.arraycopy(base, 0, args, 0, base.length);
        System.arraycopy(extra, 0, args, base.length, extra.length);
        return SampleApplication.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private void restoreBackup() {
        jdbc.execute("DELETE FROM " + fenceTable);
        jdbc.execute("INSERT INTO " + fenceTable + " SELECT * FROM " + backupTable);
    }

    @Test
    void afterARestoreTheCommandRefusesTheZombieAndKeepsTheCurrentHolder() throws Throwable {
        try (Lease first = issuer.acquire(resource, Duration.ofSeconds(5))) {
            store.fence(resource, first.token(), () -> null);
        }
        jdbc.execute("CREATE TABLE " + backupTable + " AS SELECT * FROM " + fenceTable);
        FencingToken zombie;
        try (Lease second = issuer.acquire(resource, Duration.ofSeconds(5))) {
            zombie = second.token();
            store.fence(resource, zombie, () -> null);
        }
        try (Lease current = issuer.acquire(resource, Duration.ofSeconds(5))) {
            store.fence(resource, current.token(), () -> null);
            restoreBackup();

            assertThat(run("--lease-table", leaseTable, "--actor", "test-operator")).isZero();

            assertThat(out.toString(StandardCharsets.UTF_8))
                    .contains("raised max_seen of 1 of 2 resources in " + fenceTable).contains("test-operator");
            assertThatThrownBy(() -> store.fence(resource, zombie, () -> null))
                    .isInstanceOf(TokenRejectedException.class);
            assertThat(store.fence(resource, current.token(), () -> "written")).isEqualTo("written");
        }
        assertThat(run("--lease-table", leaseTable)).as("a second run").isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("raised max_seen of 0 of 2 resources");
    }

    /**
     * A restore under an offset issuer (fencing.issuer.offset.base=100000): without --offset the command raised to
     * the bare counters (nothing raised) and a zombie's 100002 was accepted after 100003 (a trial). Now it refuses
     * before changing anything, and with --offset it raises to the shifted tokens, a resource created after the
     * backup (listed by the lease table) included.
     */
    @Test
    void underAnOffsetIssuerTheCommandRefusesWithoutTheOffsetAndRaisesWithIt() throws Throwable {
        new JdbcIssuerBase(dataSource, baseTable, true).establish("default", 100_000);
        OffsetTokenIssuer shifted = OffsetTokenIssuer.of(issuer, 100_000);
        try (Lease first = shifted.acquire(resource, Duration.ofSeconds(5))) {
            store.fence(resource, first.token(), () -> null);
        }
        jdbc.execute("CREATE TABLE " + backupTable + " AS SELECT * FROM " + fenceTable);
        FencingToken zombie;
        try (Lease second = shifted.acquire(resource, Duration.ofSeconds(5))) {
            zombie = second.token();
            store.fence(resource, zombie, () -> null);
        }
        try (Lease third = shifted.acquire(resource, Duration.ofSeconds(5))) {
            store.fence(resource, third.token(), () -> null);
        }
        String created = resource + ":created-after-the-backup";
        FencingToken createdZombie;
        try (Lease lease = shifted.acquire(created, Duration.ofSeconds(5))) {
            createdZombie = lease.token();
            store.fence(created, createdZombie, () -> null);
        }
        restoreBackup();

        assertThat(run("--lease-table", leaseTable, "--issuer-base-table", baseTable)).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("refused, nothing changed",
                "is below the base 100000 that the issuer migration 'default' stored", "--offset default");
        assertThat(new JdbcFenceAdmin(store).maxSeen(resource)).hasValue(100_001);

        assertThat(run("--lease-table", leaseTable, "--issuer-base-table", baseTable, "--offset", "default"))
                .isZero();

        assertThat(out.toString(StandardCharsets.UTF_8)).contains("raised max_seen of 4 of 4 resources");
        assertThat(new JdbcFenceAdmin(store).maxSeen(resource)).hasValue(100_003);
        assertThatThrownBy(() -> store.fence(resource, zombie, () -> null))
                .isInstanceOf(TokenRejectedException.class);
        assertThatThrownBy(() -> store.fence(created, createdZombie, () -> null))
                .isInstanceOf(TokenRejectedException.class);
        try (Lease next = shifted.acquire(resource, Duration.ofSeconds(5))) {
            assertThat(store.fence(resource, next.token(), () -> "written")).isEqualTo("written");
        }
    }

    /**
     * A key with a colon of its own ({@code reg:eu:7}) is of family {@code reg:eu}, which the raise sees only when a
     * key of it is in a table: a re-trial's restore without any left its zombie writing after the raise. Named with
     * --family, it gets a floor; with --no-lease the line says what it raised to.
     */
    @Test
    void aNamedFamilyGetsAFloorThatItsKeysWithoutARowAreJudgedAgainst() throws Throwable {
        String family = resource + ":eu";
        store.fence(family + ":7", new FencingToken(family + ":7", 182, "holder"), () -> null);
        jdbc.execute("DELETE FROM " + fenceTable); // the restore, without any key of the family

        assertThat(run("--no-lease", "--at-least", "190", "--family", family)).isZero();

        assertThat(out.toString(StandardCharsets.UTF_8)).contains("raised max_seen of 1 of 1 resources in "
                + fenceTable + " (to 190) by");
        assertThatThrownBy(() -> store.fence(family + ":7", new FencingToken(family + ":7", 182, "zombie"),
                () -> null)).isInstanceOf(TokenRejectedException.class);
        assertThat(run("--no-lease", "--at-least", "190", "--family", " ")).isEqualTo(2);
    }

    @Test
    void aResourceCreatedAfterTheBackupIsRaisedFromTheLeaseTableWithoutNamingIt() throws Throwable {
        try (Lease first = issuer.acquire(resource, Duration.ofSeconds(5))) {
            store.fence(resource, first.token(), () -> null);
        }
        jdbc.execute("CREATE TABLE " + backupTable + " AS SELECT * FROM " + fenceTable);
        String created = resource + ":created-after-the-backup";
        FencingToken zombie;
        try (Lease lease = issuer.acquire(created, Duration.ofSeconds(5))) {
            zombie = lease.token();
            store.fence(created, zombie, () -> null);
        }
        restoreBackup(); // no row for it any more: its zombie's token would be a first one

        assertThat(run("--lease-table", leaseTable)).isZero();

        assertThat(out.toString(StandardCharsets.UTF_8)).contains("raised max_seen of 1 of 4 resources");
        assertThatThrownBy(() -> store.fence(created, zombie, () -> null))
                .isInstanceOf(TokenRejectedException.class);
        try (Lease next = issuer.acquire(created, Duration.ofSeconds(5))) {
            assertThat(store.fence(created, next.token(), () -> "written")).isEqualTo("written");
        }
    }

    @Test
    void anExplicitFloorCoversARestoredLeaseTableToo() throws Throwable {
        FencingToken zombie;
        store.fence(resource, new FencingToken(resource, 3, "old"), () -> null);
        jdbc.execute("CREATE TABLE " + backupTable + " AS SELECT * FROM " + fenceTable);
        zombie = new FencingToken(resource, 9, "zombie"); // issued since the backup, by an issuer restored too
        store.fence(resource, zombie, () -> null);

        String created = resource + ":created-after-the-backup";
        store.fence(created, new FencingToken(created, 8, "zombie"), () -> null);
        restoreBackup(); // the restored table has no row for it

        assertThat(run("--no-lease", "--at-least", "9", "--resource", created)).isZero();

        assertThat(new JdbcFenceAdmin(store).maxSeen(resource)).hasValue(9);
        assertThat(new JdbcFenceAdmin(store).maxSeen(created)).hasValue(9);
        assertThatThrownBy(() -> store.fence(created, new FencingToken(created, 8, "zombie"), () -> null))
                .isInstanceOf(TokenRejectedException.class);
        assertThatThrownBy(() -> store.fence(resource, zombie, () -> null))
                .isInstanceOf(TokenRejectedException.class);
        assertThat(store.fence(resource, new FencingToken(resource, 10, "next"), () -> "written"))
                .isEqualTo("written");
    }

    @Test
    void badOptionsExitTwoAndChangeNothing() throws Throwable {
        store.fence(resource, new FencingToken(resource, 3, "h"), () -> null);
        assertThat(run("--no-lease")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--no-lease needs --at-least");
        assertThat(run("--at-least", "-4")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("positive number, was -4");
        assertThat(run("--bogus")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("unknown option '--bogus'");
        assertThat(new JdbcFenceAdmin(store).maxSeen(resource)).hasValue(3);
    }
}
