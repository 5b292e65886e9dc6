package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.annotation.Fenced;
import dev.fencing.context.FencingContext;
import dev.fencing.context.FencingScope;
import dev.fencing.rule.StaleTokenException;
import dev.fencing.spring.EnableFencing;
import dev.fencing.store.FenceStore;
import dev.fencing.store.InMemoryFenceStore;
import dev.fencing.store.RoutingFenceStore;
import dev.fencing.token.FencingToken;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * One operation writing several fenced resources carries a token for each, and each resource checks its own. Where
 * the writes share a transaction, a stale token for either one stops both; where one resource is not
 * transactional, its write stands if it ran before the rejection.
 */
class SeveralResourcesTest {

    public static class Accounts {
        private final JdbcTemplate jdbc;
        private final String table;

        public Accounts(JdbcTemplate jdbc, String table) {
            this.jdbc = jdbc;
            this.table = table;
        }

        @Fenced(resource = "accounts", key = "#id")
        public void debit(String id, int amount) {
            jdbc.update("INSERT INTO " + table + " (k, token, v) VALUES (?, 0, ?)", "accounts:" + id,
                    "debit " + amount);
        }
    }

    public static class Ledger {
        private final JdbcTemplate jdbc;
        private final String table;

        public Ledger(JdbcTemplate jdbc, String table) {
            this.jdbc = jdbc;
            this.table = table;
        }

        @Fenced(resource = "ledger")
        public void append(String line) {
            jdbc.update("INSERT INTO " + table + " (k, token, v) VALUES ('ledger', 0, ?)", line);
        }
    }

    /** Not transactional: an in-memory cache with its own fence. */
    public static class Cache {
        final Map<String, String> entries = new ConcurrentHashMap<>();

        @Fenced(resource = "cache")
        public void put(String key, String value) {
            entries.put(key, value);
        }

        public void clear() {
            entries.clear();
        }

        public Map<String, String> snapshot() {
            return Map.copyOf(entries);
        }
    }

    public static class TransferService {
        private final Accounts accounts;
        private final Ledger ledger;
        private final Cache cache;

        public TransferService(Accounts accounts, Ledger ledger, Cache cache) {
            this.accounts = accounts;
            this.ledger = ledger;
            this.cache = cache;
        }

        @Transactional
        public void transfer(String account, int amount) {
            accounts.debit(account, amount);
            ledger.append("moved " + amount + " from " + account);
        }

        @Transactional
        public void transferThenCache(String account, int amount) {
            accounts.debit(account, amount);
            cache.put(account, "balance changed");
        }

        @Transactional
        public void cacheThenTransfer(String account, int amount) {
            cache.put(account, "balance changed");
            accounts.debit(account, amount);
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableTransactionManagement
    @EnableFencing
    static class Fencing {
    }

    private HikariDataSource pool;
    private JdbcTemplate jdbc;
    private String fenceTable;
    private String dataTable;
    private AnnotationConfigApplicationContext context;

    private void start(Database database) {
        pool = database.newPool(4);
        jdbc = new JdbcTemplate(pool);
        fenceTable = Database.uniqueTable("fence");
        dataTable = Database.uniqueTable("data");
        jdbc.execute(database.createDataTable(dataTable));
        DataSourceTransactionManager tm = new DataSourceTransactionManager(pool);
        JdbcFenceStore database1 = JdbcFenceStore.builder(pool).transactionManager(tm).table(fenceTable)
                .createTableIfMissing(true).build();
        context = new AnnotationConfigApplicationContext();
        context.registerBean(PlatformTransactionManager.class, () -> tm);
        context.registerBean(FenceStore.class, () -> RoutingFenceStore.builder()
                .route("cache", new InMemoryFenceStore()).fallback(database1).build());
        context.registerBean(Accounts.class, () -> new Accounts(jdbc, dataTable));
        context.registerBean(Ledger.class, () -> new Ledger(jdbc, dataTable));
        context.registerBean(Cache.class, Cache::new);
        context.registerBean(TransferService.class, () -> new TransferService(context.getBean(Accounts.class),
                context.getBean(Ledger.class), context.getBean(Cache.class)));
        context.register(Fencing.class);
        context.refresh();
    }

    @AfterEach
    void stop() {
        context.close();
        jdbc.execute("DROP TABLE IF EXISTS " + fenceTable);
        jdbc.execute("DROP TABLE IF EXISTS " + dataTable);
        pool.close();
    }

    private List<String> rows() {
        return jdbc.queryForList("SELECT v FROM " + dataTable + " ORDER BY id", String.class);
    }

    private static void withTokens(Runnable work, FencingToken... tokens) {
        try (FencingScope ignored = FencingContext.bind(tokens)) {
            work.run();
        }
    }

    @ParameterizedTest
    @EnumSource(Database.class)
    void aStaleTokenForEitherResourceStopsBothWritesInOneTransaction(Database database) {
        start(database);
        TransferService service = context.getBean(TransferService.class);
        withTokens(() -> service.transfer("1", 10),
                new FencingToken("accounts:1", 34, "new"), new FencingToken("ledger", 34, "new"));
        assertThat(rows()).containsExactly("debit 10", "moved 10 from 1");

        // fresh for the account (35), stale for the ledger (33): the debit is checked and written, then the ledger
        // refuses, and the transaction takes the debit back with it
        assertThatThrownBy(() -> withTokens(() -> service.transfer("1", 99),
                new FencingToken("accounts:1", 35, "zombie"), new FencingToken("ledger", 33, "zombie")))
                .isInstanceOfSatisfying(StaleTokenException.class, e -> assertThat(e.resource()).isEqualTo("ledger"));
        assertThat(rows()).containsExactly("debit 10", "moved 10 from 1");
        assertThat(jdbc.queryForObject("SELECT max_seen FROM " + fenceTable
                + " WHERE resource = 'accounts:1'", Long.class))
                .isEqualTo(34); // 35 never landed: rolled back with the debit

        // and the other way round: stale for the account, fresh for the ledger: nothing is written
        assertThatThrownBy(() -> withTokens(() -> service.transfer("1", 77),
                new FencingToken("accounts:1", 20, "zombie"), new FencingToken("ledger", 40, "zombie")))
                .isInstanceOfSatisfying(StaleTokenException.class, e ->
                        assertThat(e.resource()).isEqualTo("accounts:1"));
        assertThat(rows()).containsExactly("debit 10", "moved 10 from 1");
    }

    @ParameterizedTest
    @EnumSource(value = Database.class, names = "H2")
    void aNonTransactionalResourceKeepsAWriteThatRanBeforeTheRejection(Database database) {
        start(database);
        TransferService service = context.getBean(TransferService.class);
        Cache cache = context.getBean(Cache.class);
        withTokens(() -> service.transferThenCache("2", 5),
                new FencingToken("accounts:2", 10, "a"), new FencingToken("cache", 10, "a"));

        // database first, cache last: the stale cache token rolls the database write back; nothing changed
        assertThatThrownBy(() -> withTokens(() -> service.transferThenCache("2", 6),
                new FencingToken("accounts:2", 11, "z"), new FencingToken("cache", 9, "z")))
                .isInstanceOf(StaleTokenException.class);
        assertThat(rows()).containsExactly("debit 5");

        // cache first: the cache accepted and applied its write before the database refused; the transaction
        // rolls back the database, but nothing rolls back the cache
        cache.clear();
        assertThatThrownBy(() -> withTokens(() -> service.cacheThenTransfer("2", 7),
                new FencingToken("accounts:2", 3, "z"), new FencingToken("cache", 11, "z")))
                .isInstanceOf(StaleTokenException.class);
        assertThat(rows()).containsExactly("debit 5");
        assertThat(cache.snapshot()).containsEntry("2", "balance changed");
    }
}
