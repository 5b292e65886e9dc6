package dev.fencing.sample;

import dev.fencing.issuer.Lease;
import dev.fencing.issuer.OffsetTokenIssuer;
import dev.fencing.jdbc.JdbcFenceAdmin;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcIssuerBase;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterEach;
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

/** {@code --admin reset-floor} on PostgreSQL: a locked-out resource recovered from the command line, and refusals. */
class AdminCommandTest {

    private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    private final String fenceTable = "admin_fence_" + suffix;
    private final String leaseTable = "admin_lease_" + suffix;
    private final String baseTable = "admin_base_" + suffix;
    private final String resource = "accounts:" + suffix;
    private SimpleDriverDataSource dataSource;

    private int run(String... args) throws Throwable {
        return SampleApplication.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private int reset(String... extra) throws Throwable {
        String[] base = {"--admin", "reset-floor", resource, "--jdbc-url", URL, "--fence-table", fenceTable,
                "--lease-table", leaseTable, "--actor", "test-operator"};
        String[] args = new String[base.length + extra.length];
        System.arraycopy(base, 0, args, 0, base.length);
        System.arraycopy(extra, 0, args, base.length, extra.length);
        return run(args);
    }

    @AfterEach
    void dropTables() {
        if (dataSource != null) {
            JdbcTemplate jdbc = new JdbcTemplate(dataSource);
            jdbc.execute("DROP TABLE IF EXISTS " + fenceTable);
            jdbc.execute("DROP TABLE IF EXISTS " + leaseTable);
            jdbc.execute("DROP TABLE IF EXISTS " + baseTable);
        }
    }

    @Test
    void resetFloorRecoversALockedOutResourceAndRefusesWhileALeaseIsHeld() throws Throwable {
        dataSource = new SimpleDriverDataSource(DriverManager.getDriver(URL), URL, "postgres", "");
        JdbcFenceStore store = JdbcFenceStore.builder(dataSource).table(fenceTable).createTableIfMissing(true).build();
        JdbcTokenIssuer issuer = JdbcTokenIssuer.builder(dataSource).table(leaseTable).createTableIfMissing(true)
                .build();
        store.fence(resource, new FencingToken(resource, Long.MAX_VALUE, "evil"), () -> null);
        try (Lease held = issuer.acquire(resource, Duration.ofSeconds(5))) {
            FencingToken real = held.token();
            assertThatThrownBy(() -> store.fence(resource, real, () -> null)).isInstanceOf(StaleTokenException.class);
            assertThat(reset()).isEqualTo(1);
            assertThat(err.toString(StandardCharsets.UTF_8)).contains("refused", resource, "held");
        }
        assertThat(new JdbcFenceAdmin(store).maxSeen(resource)).hasValue(Long.MAX_VALUE);

        assertThat(reset()).isZero();

        assertThat(out.toString(StandardCharsets.UTF_8)).contains("max_seen of '" + resource + "' lowered from "
                + Long.MAX_VALUE + " to 1 (highest issued token 1) by test-operator")
                // no base table of the default name: the command says which table it read
                .contains("note: no issuer base table 'fencing_issuer_base' in this database");
        try (Lease next = issuer.acquire(resource, Duration.ofSeconds(5))) {
            assertThat(store.fence(resource, next.token(), () -> "written")).isEqualTo("written");
        }
    }

    /**
     * A lease table whose tokens carry an issuer offset (fencing.issuer.offset.base=100000): without --offset the
     * command read the bare counter (2) and lowered max_seen below the tokens in circulation, and a zombie's 100001
     * was accepted after 100002 (a trial). Now it refuses below the stored base, and with --offset it adds the base.
     */
    @Test
    void resetFloorOfAnOffsetIssuerRefusesWithoutTheOffsetAndAddsItWithIt() throws Throwable {
        dataSource = new SimpleDriverDataSource(DriverManager.getDriver(URL), URL, "postgres", "");
        JdbcFenceStore store = JdbcFenceStore.builder(dataSource).table(fenceTable).createTableIfMissing(true).build();
        JdbcTokenIssuer lease = JdbcTokenIssuer.builder(dataSource).table(leaseTable).createTableIfMissing(true)
                .build();
        new JdbcIssuerBase(dataSource, baseTable, true).establish("default", 100_000);
        OffsetTokenIssuer issuer = OffsetTokenIssuer.of(lease, 100_000);
        FencingToken zombie;
        try (Lease first = issuer.acquire(resource, Duration.ofSeconds(5))) {
            zombie = first.token();
            store.fence(resource, zombie, () -> null);
        }
        try (Lease second = issuer.acquire(resource, Duration.ofSeconds(5))) {
            store.fence(resource, second.token(), () -> null);
        }
        store.fence(resource, new FencingToken(resource, Long.MAX_VALUE, "evil"), () -> null);

        assertThat(reset("--issuer-base-table", baseTable)).isEqualTo(1);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("refused", "the new max_seen (the issuer's "
                + "highest issued token) 2 is below the base 100000 that the issuer migration 'default' stored",
                "--offset default");
        assertThat(new JdbcFenceAdmin(store).maxSeen(resource)).hasValue(Long.MAX_VALUE);
        err.reset();
        assertThat(reset("--issuer-base-table", baseTable, "--offset", "other")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--offset other: the issuer base table "
                + baseTable + " stores no base under that name; stored: {default=100000}");

        err.reset();
        assertThat(reset("--issuer-base-table", baseTable + "_absent", "--offset", "default")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--offset default: the issuer base table "
                + baseTable + "_absent does not exist; give its name with --issuer-base-table");
        assertThat(new JdbcFenceAdmin(store).maxSeen(resource)).hasValue(Long.MAX_VALUE);

        assertThat(reset("--issuer-base-table", baseTable, "--offset", "default")).isZero();

        assertThat(out.toString(StandardCharsets.UTF_8)).contains("lowered from " + Long.MAX_VALUE
                + " to 100002 (highest issued token 100002)");
        assertThatThrownBy(() -> store.fence(resource, zombie, () -> null)).isInstanceOf(StaleTokenException.class);
        try (Lease next = issuer.acquire(resource, Duration.ofSeconds(5))) {
            assertThat(store.fence(resource, next.token(), () -> "written")).isEqualTo("written");
        }
    }

    @Test
    void badAdminCommandLinesExitWithTwoAndSayWhy() throws Throwable {
        assertThat(run("--admin")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("needs a command");
        err.reset();
        assertThat(run("--admin", "reset-floor", "accounts:1")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("needs --jdbc-url");
        err.reset();
        assertThat(run("--admin", "reset-floor", "accounts:1", "--jdbc-url", URL, "--no-lease")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--no-lease needs --to N and --override");
        err.reset();
        assertThat(run("--admin", "reset-floor", "accounts:1", "--jdbc-url", URL, "--to", "ten")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("'--to' needs a number, was 'ten'");
        err.reset();
        assertThat(run("--admin", "--help")).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("reset-floor", "--force", "--override", "--to");
    }
}
