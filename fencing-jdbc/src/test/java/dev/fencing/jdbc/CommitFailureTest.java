package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.FencingException;
import dev.fencing.store.FenceStoreException;
import dev.fencing.store.TransientFenceFailure;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.jdbc.core.JdbcTemplate;

import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * What the guard sees when the transaction the store opened cannot commit, and the README's promise that a checked
 * exception from the fenced body commits: a failed commit is an {@code error} (a serialization failure at commit a
 * {@code conflict}) naming the resource, never {@code accepted}, and the write did not land; a constraint the write
 * violated, found at commit, is the write's own failure, as if the body had thrown it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(60)
class CommitFailureTest {

    private final Map<Database, HikariDataSource> pools = new EnumMap<>(Database.class);
    private final List<String> cleanup = new ArrayList<>();

    private HikariDataSource pool(Database database) {
        return pools.computeIfAbsent(database, d -> d.newPool(4));
    }

    @AfterAll
    void close() {
        for (String drop : cleanup) {
            Database database = Database.valueOf(drop.substring(0, drop.indexOf('|')));
            new JdbcTemplate(pool(database)).execute(drop.substring(drop.indexOf('|') + 1));
        }
        pools.values().forEach(HikariDataSource::close);
    }

    private JdbcFenceStore store(Database database) {
        String table = Database.uniqueTable("fence");
        cleanup.add(database + "|DROP TABLE IF EXISTS " + table);
        return JdbcFenceStore.builder(pool(database)).table(table).createTableIfMissing(true).build();
    }

    private String dataTable(Database database) {
        String table = Database.uniqueTable("data");
        cleanup.add(0, database + "|DROP TABLE IF EXISTS " + table);
        new JdbcTemplate(pool(database)).execute(database.createDataTable(table));
        return table;
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aCheckedExceptionFromTheBodyCommitsTheWriteAndMaxSeen(Database database) throws Throwable {
        JdbcFenceStore store = store(database);
        String data = dataTable(database);
        JdbcTemplate jdbc = new JdbcTemplate(pool(database));
        String r = "checked-" + System.nanoTime();
        Guarded guarded = new Guarded(store, r);
        IOException thrown = new IOException("reported after the write");
        assertThatThrownBy(() -> guarded.call(new FencingToken(r, 7, "a"), () -> {
            jdbc.update("INSERT INTO " + data + " (k, token, v) VALUES (?, 7, 'kept')", r);
            throw thrown;
        })).isSameAs(thrown);
        assertThat(new JdbcFenceAdmin(store).maxSeen(r)).hasValue(7);
        assertThat(jdbc.queryForList("SELECT v FROM " + data + " WHERE k = ?", String.class, r))
                .containsExactly("kept");
        assertThat(guarded.checks("accepted")).isEqualTo(1);
    }

    /**
     * A constraint found violated at commit (deferred, or a JPA flush at commit) is the application's data, not the
     * fence store: its own exception, as thrown from the body, not a 503 "Fence store unavailable" and an alert on
     * the store (a new user's trial saw a too-long column value so).
     */
    @Test
    void aConstraintViolatedAtCommitIsTheWritesOwnFailureAndTheWriteDidNotLand() {
        JdbcFenceStore store = store(Database.POSTGRESQL);
        JdbcTemplate jdbc = new JdbcTemplate(pool(Database.POSTGRESQL));
        String data = Database.uniqueTable("deferred");
        cleanup.add(0, "POSTGRESQL|DROP TABLE IF EXISTS " + data);
        // a constraint checked only at commit: the write succeeds, the commit fails
        jdbc.execute("CREATE TABLE " + data + " (k VARCHAR(64), v VARCHAR(64), CONSTRAINT " + data + "_k UNIQUE (k) "
                + "DEFERRABLE INITIALLY DEFERRED)");
        String r = "commit-" + System.nanoTime();
        jdbc.update("INSERT INTO " + data + " VALUES (?, 'first')", r);
        Guarded guarded = new Guarded(store, r);
        FencingToken token = new FencingToken(r, 12, "a");
        Throwable failure = catchThrowable(() -> guarded.call(token, () ->
                jdbc.update("INSERT INTO " + data + " VALUES (?, 'duplicate')", r)));
        assertThat(failure).isInstanceOf(DataIntegrityViolationException.class).isNotInstanceOf(FencingException.class);
        assertThat(guarded.checks("error")).as("not the store's failure").isZero();
        assertThat(guarded.checks("accepted")).as("as a body that threw").isEqualTo(1);
        assertThat(new JdbcFenceAdmin(store).maxSeen(r)).as("the check rolled back with the write").isEmpty();
        assertThat(jdbc.queryForList("SELECT v FROM " + data + " WHERE k = ?", String.class, r))
                .containsExactly("first");
    }

    @Test
    void aSerializationFailureAtCommitIsAConflict() {
        JdbcFenceStore store = store(Database.POSTGRESQL);
        JdbcTemplate jdbc = new JdbcTemplate(pool(Database.POSTGRESQL));
        String data = dataTable(Database.POSTGRESQL);
        String function = Database.uniqueTable("fail40001");
        cleanup.add(1, "POSTGRESQL|DROP FUNCTION IF EXISTS " + function + "() CASCADE");
        // what SERIALIZABLE does at commit when it finds a dangerous structure, made deterministic
        jdbc.execute("CREATE FUNCTION " + function + "() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                + "RAISE EXCEPTION 'could not serialize access (simulated)' USING ERRCODE = '40001'; END $$");
        jdbc.execute("CREATE CONSTRAINT TRIGGER " + function + " AFTER INSERT ON " + data
                + " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION " + function + "()");
        String r = "commit-" + System.nanoTime();
        Guarded guarded = new Guarded(store, r);
        FencingToken token = new FencingToken(r, 3, "a");
        Throwable failure = catchThrowable(() -> guarded.call(token, () ->
                jdbc.update("INSERT INTO " + data + " (k, token, v) VALUES (?, 3, 'x')", r)));
        assertThat(failure).isInstanceOf(ConcurrencyFailureException.class).isInstanceOf(TransientFenceFailure.class)
                .hasMessageContaining(r);
        assertThat(((TransientFenceFailure) failure).reason()).isEqualTo(TransientFenceFailure.Reason.CONFLICT);
        assertThat(((TransientFenceFailure) failure).presented()).isSameAs(token);
        assertThat(guarded.checks("conflict")).isEqualTo(1);
        assertThat(guarded.checks("accepted") + guarded.checks("error")).isZero();
        assertThat(new JdbcFenceAdmin(store).maxSeen(r)).isEmpty();
    }

    @Test
    void theDatabaseBecomingUnreachableMidCallIsAnErrorAndTheWriteDidNotLand() throws Throwable {
        JdbcFenceStore store = store(Database.POSTGRESQL);
        String data = dataTable(Database.POSTGRESQL);
        JdbcTemplate jdbc = new JdbcTemplate(pool(Database.POSTGRESQL));
        String r = "unreachable-" + System.nanoTime();
        store.fence(r, new FencingToken(r, 39, "earlier"), () -> null);
        Guarded guarded = new Guarded(store, r);
        try (HikariDataSource admin = Database.POSTGRESQL.newPool(1)) {
            Throwable failure = catchThrowable(() -> guarded.call(new FencingToken(r, 40, "victim"), () -> {
                jdbc.update("INSERT INTO " + data + " (k, token, v) VALUES (?, 40, 'lost')", r);
                int pid = jdbc.queryForObject("SELECT pg_backend_pid()", Integer.class);
                // the server goes away under the fenced transaction; the body itself completes
                new JdbcTemplate(admin).queryForObject("SELECT pg_terminate_backend(?)", Boolean.class, pid);
                return null;
            }));
            assertThat(failure).isInstanceOf(FenceStoreException.class).hasMessageContaining(r);
        }
        assertThat(guarded.checks("error")).isEqualTo(1);
        assertThat(guarded.checks("accepted")).isZero();
        assertThat(new JdbcFenceAdmin(store).maxSeen(r)).hasValue(39);
        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM " + data + " WHERE k = ?", Long.class, r)).isZero();
    }
}
