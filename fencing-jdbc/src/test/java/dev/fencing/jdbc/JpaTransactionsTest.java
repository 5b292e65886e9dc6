package dev.fencing.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.token.FencingToken;
import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.orm.jpa.LocalContainerEntityManagerFactoryBean;
import org.springframework.orm.jpa.SharedEntityManagerCreator;
import org.springframework.orm.jpa.persistenceunit.PersistenceManagedTypes;
import org.springframework.orm.jpa.vendor.HibernateJpaVendorAdapter;
import org.springframework.transaction.support.TransactionTemplate;

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The JDBC store in real Hibernate (JPA) transactions on PostgreSQL (from a red-team review). stores.md promises that
 * the check "joins whatever transaction holds a connection of that DataSource on the calling thread (Spring binds it by
 * data source, so DataSourceTransactionManager, JdbcTransactionManager and JpaTransactionManager transactions are all
 * joined)" "either way", whether or not {@code transactionManager(..)} is given. Here the store is given a
 * {@link DataSourceTransactionManager} of its own DataSource (accepted by {@code build()}), and the application's
 * transactions are JPA ones.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class JpaTransactionsTest {

    @Entity
    @Table(name = "jpa_fenced_note")
    public static class Note {
        @Id
        String id;
        @Column(name = "k")
        String k;
        @Column(name = "token")
        long token;

        public Note() {
        }

        Note(String k, long token) {
            this.id = UUID.randomUUID().toString();
            this.k = k;
            this.token = token;
        }

        public String getK() {
            return k;
        }
    }

    private final String schema = "jpa_tx_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private HikariDataSource pool;
    private LocalContainerEntityManagerFactoryBean factoryBean;
    private EntityManager em;
    private JpaTransactionManager jpa;
    private JdbcFenceStore withJdbcManager;
    private JdbcFenceStore withJpaManager;
    private JdbcTemplate jdbc;

    @BeforeAll
    void start() {
        try (HikariDataSource admin = Database.POSTGRESQL.newPool(1)) {
            new JdbcTemplate(admin).execute("CREATE SCHEMA " + schema);
        }
        pool = Database.postgresInSchema(8, schema);
        jdbc = new JdbcTemplate(pool);
        jdbc.execute(JdbcDialect.POSTGRESQL.createTableSql(JdbcFenceStore.DEFAULT_TABLE));
        // seq: the order in which rows reached the table (a JPA insert is flushed at commit)
        jdbc.execute("CREATE TABLE jpa_fenced_note (id VARCHAR(64) PRIMARY KEY, seq BIGSERIAL, k VARCHAR(64) NOT NULL, "
                + "token BIGINT NOT NULL)");
        factoryBean = new LocalContainerEntityManagerFactoryBean();
        factoryBean.setDataSource(pool);
        factoryBean.setJpaVendorAdapter(new HibernateJpaVendorAdapter());
        factoryBean.setManagedTypes(PersistenceManagedTypes.of(Note.class.getName()));
        Properties properties = new Properties();
        properties.setProperty("hibernate.hbm2ddl.auto", "none");
        properties.setProperty("hibernate.default_schema", schema);
        factoryBean.setJpaProperties(properties);
        factoryBean.setPersistenceUnitName("fencing-jpa-test");
        factoryBean.afterPropertiesSet();
        EntityManagerFactory emf = factoryBean.getObject();
        em = SharedEntityManagerCreator.createSharedEntityManager(emf);
        jpa = new JpaTransactionManager(emf);
        jpa.afterPropertiesSet();
        assertThat(jpa.getDataSource()).isSameAs(pool);
        withJdbcManager = JdbcFenceStore.builder(pool).transactionManager(new DataSourceTransactionManager(pool))
                .lockTimeout(Duration.ofSeconds(2)).build();
        withJdbcManager.verify();
        withJpaManager = JdbcFenceStore.builder(pool).transactionManager(jpa).lockTimeout(Duration.ofSeconds(2))
                .build();
        withJpaManager.verify();
    }

    @AfterAll
    void stop() {
        factoryBean.destroy();
        pool.close();
        try (HikariDataSource admin = Database.POSTGRESQL.newPool(1)) {
            new JdbcTemplate(admin).execute("DROP SCHEMA " + schema + " CASCADE");
        }
    }

    private List<Long> maxSeen(String resource) {
        return jdbc.queryForList("SELECT max_seen FROM " + JdbcFenceStore.DEFAULT_TABLE + " WHERE resource = ?",
                Long.class, resource);
    }

    private List<Long> tokensInCommitOrder(String resource) {
        return jdbc.queryForList("SELECT token FROM jpa_fenced_note WHERE k = ? ORDER BY seq", Long.class, resource);
    }

    /** The control: the store given the JPA manager joins the JPA transaction and rolls back with it. */
    @Test
    void withTheJpaManagerTheCheckRollsBackWithTheCallersJpaTransaction() {
        String r = "jpa-ctl-" + UUID.randomUUID();
        FencingToken t = new FencingToken(r, 34, "h34");
        new TransactionTemplate(jpa).executeWithoutResult(s -> {
            FencedCalls.fence(withJpaManager, r, t, () -> em.persist(new Note(r, 34)));
            s.setRollbackOnly();
        });
        assertThat(maxSeen(r)).isEmpty();
        assertThat(tokensInCommitOrder(r)).isEmpty();
    }

    /** The same with the store given a DataSourceTransactionManager of the same DataSource. */
    @Test
    void withAJdbcManagerTheCheckRollsBackWithTheCallersJpaTransaction() {
        String r = "jpa-rb-" + UUID.randomUUID();
        FencingToken t = new FencingToken(r, 34, "h34");
        new TransactionTemplate(jpa).executeWithoutResult(s -> {
            FencedCalls.fence(withJdbcManager, r, t, () -> em.persist(new Note(r, 34)));
            s.setRollbackOnly();
        });
        assertThat(maxSeen(r)).as("the caller's JPA transaction rolled back: max_seen must roll back with it")
                .isEmpty();
    }

    /**
     * The other way round: the store has the application's JPA manager (what the starter gives it), and a JDBC-only
     * service runs in a DataSourceTransactionManager transaction of the same DataSource, which the JPA manager cannot
     * join. Refused, nothing written; the refusal said "another DataSource's", which misled.
     */
    @Test
    void aJdbcTransactionOfTheStoresOwnDataSourceIsRefusedByAStoreOnTheJpaManagerSayingWhy() {
        String r = "jpa-jdbc-" + UUID.randomUUID();
        FencingToken t = new FencingToken(r, 34, "h34");
        Throwable thrown = catchThrowable(() -> new TransactionTemplate(new DataSourceTransactionManager(pool))
                .executeWithoutResult(s -> FencedCalls.fence(withJpaManager, r, t, () -> jdbc.update(
                        "INSERT INTO jpa_fenced_note (id, k, token) VALUES (?, ?, ?)", UUID.randomUUID().toString(),
                        r, 34))));
        assertThat(thrown).isInstanceOf(dev.fencing.store.OutsideTransactionException.class)
                .hasMessageContaining("another transaction manager on the store's own DataSource")
                .hasMessageContaining("JpaTransactionManager");
        assertThat(tokensInCommitOrder(r)).isEmpty();
        assertThat(maxSeen(r)).isEmpty();
    }

    /**
     * The zombie (33) is checked, then pauses before its JPA transaction commits (and flushes its entity); the new
     * holder (34) writes and commits meanwhile; then the zombie commits. 33 must not commit after 34.
     */
    @Test
    void aStaleJpaWriteMustNotCommitAfterANewerOne() throws Exception {
        String r = "jpa-race-" + UUID.randomUUID();
        CountDownLatch checked = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        CompletableFuture<Throwable> zombie = CompletableFuture.supplyAsync(() -> catchThrowable(() ->
                new TransactionTemplate(jpa).executeWithoutResult(s -> {
                    FencedCalls.fence(withJdbcManager, r, new FencingToken(r, 33, "zombie"),
                            () -> em.persist(new Note(r, 33)));
                    checked.countDown();
                    try {
                        resume.await(30, TimeUnit.SECONDS); // a GC pause after the call, before the commit
                    } catch (InterruptedException e) {
                        throw new RuntimeException(e);
                    }
                })), r2 -> new Thread(r2).start());
        assertThat(checked.await(20, TimeUnit.SECONDS)).isTrue();
        Throwable newer = catchThrowable(() -> new TransactionTemplate(jpa).executeWithoutResult(s ->
                FencedCalls.fence(withJdbcManager, r, new FencingToken(r, 34, "new-holder"),
                        () -> em.persist(new Note(r, 34)))));
        resume.countDown();
        Throwable zombieOutcome = zombie.get(30, TimeUnit.SECONDS);
        List<Long> order = tokensInCommitOrder(r);
        assertThat(order).as("token order of committed writes (33 must never land after 34)")
                .isNotEqualTo(List.of(34L, 33L));
        // the zombie's check joined its JPA transaction and holds the row until that commits: 34 waited for it past
        // the store's lock timeout (retryable), where it had committed at once, before the zombie's 33
        assertThat(newer).isInstanceOf(FenceBusyException.class);
        assertThat(zombieOutcome).isNull();
        assertThat(order).containsExactly(33L);
    }
}
