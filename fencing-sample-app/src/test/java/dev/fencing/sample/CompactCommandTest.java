package dev.fencing.sample;

import dev.fencing.issuer.Lease;
import dev.fencing.jdbc.JdbcFenceAdmin;
import dev.fencing.jdbc.JdbcFenceStore;
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
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code --admin compact} on PostgreSQL: idle per-entity rows of the fence table and the lease table are folded into
 * their family's floor, a folded key's old token stays refused and a fresh one is accepted; the floor raise after a
 * restore covers the family floors; bad options change nothing.
 */
class CompactCommandTest {

    private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private final String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    private final String fenceTable = "compact_fence_" + suffix;
    private final String leaseTable = "compact_lease_" + suffix;
    private final String family = "accounts" + suffix;
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
        for (String table : new String[] {fenceTable, leaseTable}) {
            jdbc.execute("DROP TABLE IF EXISTS " + table);
        }
    }

    private int run(String command, String... extra) throws Throwable {
        String[] base = {"--admin", command, "--jdbc-url", URL, "--fence-table", fenceTable};
        String[] args = new String[base.length + extra.length];
        System.arraycopy(base, 0, args, 0, base.length);
        System.arraycopy(extra, 0, args, base.length, extra.length);
        return SampleApplication.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    /** Writes each key once with a token of the lease table; returns the tokens. */
    private List<FencingToken> writeKeys(int keys) throws Throwable {
        List<FencingToken> tokens = new ArrayList<>();
        for (int i = 1; i <= keys; i++) {
            String resource = family + ":" + i;
            try (Lease lease = issuer.acquire(resource, Duration.ofSeconds(5))) {
                store.fence(resource, lease.token(), () -> null);
                tokens.add(lease.token());
            }
        }
        return tokens;
    }

    /** Makes keys 1..n look idle for two days, in both tables. */
    private void ageKeys(int n) {
        for (int i = 1; i <= n; i++) {
            String resource = family + ":" + i;
            jdbc.update("UPDATE " + fenceTable + " SET updated_at = updated_at - INTERVAL '2 days' WHERE resource = ?",
                    resource);
            jdbc.update("UPDATE " + leaseTable + " SET expires_at = expires_at - INTERVAL '2 days' WHERE resource = ?",
                    resource);
        }
    }

    private long rows(String table) {
        return jdbc.queryForObject("SELECT COUNT(*) FROM " + table + " WHERE resource LIKE ?", Long.class,
                family + ":%");
    }

    @Test
    void foldsIdleKeysOfBothTablesAndAFoldedKeysOldTokenStaysRefused() throws Throwable {
        List<FencingToken> tokens = writeKeys(5);
        ageKeys(4);

        assertThat(run("compact", "--idle-for", "1d", "--lease-table", leaseTable, "--batch-size", "3")).isZero();

        assertThat(out.toString(StandardCharsets.UTF_8)).contains("folded 4 resources of " + fenceTable)
                .contains("lease table " + leaseTable + " compacted too");
        assertThat(rows(fenceTable)).as("fence rows left: the fresh key").isEqualTo(1);
        assertThat(rows(leaseTable)).as("lease rows left: the fresh key").isEqualTo(1);
        long highestFolded = tokens.subList(0, 4).stream().mapToLong(FencingToken::value).max().orElseThrow();
        assertThat(new JdbcFenceAdmin(store).familyFloor(family)).hasValue(highestFolded);

        FencingToken old = tokens.get(0);
        assertThatThrownBy(() -> store.fence(old.resource(), old, () -> null))
                .isInstanceOf(TokenRejectedException.class);
        try (Lease fresh = issuer.acquire(old.resource(), Duration.ofSeconds(5))) {
            assertThat(fresh.token().value()).isGreaterThan(highestFolded);
            assertThat(store.fence(old.resource(), fresh.token(), () -> "written")).isEqualTo("written");
        }
    }

    @Test
    void theFloorRaiseAfterARestoreRaisesFamilyFloorsToo() throws Throwable {
        writeKeys(3);
        ageKeys(3);
        assertThat(run("compact", "--idle-for", "1d", "--lease-table", leaseTable)).isZero();
        assertThat(rows(fenceTable)).isZero();
        String folded = family + ":2";
        FencingToken zombie = new FencingToken(folded, 500, "zombie"); // issued after the backup by a restored issuer

        assertThat(run("raise-floors", "--no-lease", "--at-least", "600")).isZero();

        assertThat(new JdbcFenceAdmin(store).familyFloor(family)).hasValue(600);
        assertThatThrownBy(() -> store.fence(folded, zombie, () -> null)).isInstanceOf(TokenRejectedException.class);
        assertThat(store.fence(folded, new FencingToken(folded, 601, "next"), () -> "written")).isEqualTo("written");
    }

    @Test
    void badOptionsExitTwoAndChangeNothing() throws Throwable {
        writeKeys(2);
        ageKeys(2);
        assertThat(run("compact", "--lease-table", leaseTable)).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("compact needs --idle-for");
        assertThat(run("compact", "--idle-for", "0s")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("needs a positive duration, was '0s'");
        assertThat(run("compact", "--idle-for", "soon")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("was 'soon'");
        assertThat(run("compact", "--idle-for", "1d", "--batch-size", "0")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("positive number, was 0");
        assertThat(run("compact", "--idle-for", "1d", "--one-sequence", "--lease-table", leaseTable)).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8))
                .contains("--one-sequence and --lease-table contradict each other");
        assertThat(rows(fenceTable)).isEqualTo(2);
        assertThat(rows(leaseTable)).isEqualTo(2);
    }
}
