package dev.fencing.shedlock;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.spring.EnableFencing;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.transaction.PlatformTransactionManager;

import java.sql.Timestamp;
import java.time.Duration;
import java.util.UUID;

/**
 * One scheduler instance, as a deployed application would be: its own Spring context and pool on the shared
 * PostgreSQL, {@code @EnableScheduling} and {@code @EnableSchedulerLock} with ShedLock's JDBC provider, and a job
 * under {@code @SchedulerLock(name = "ledger-job", lockAtMostFor = "PT2S")} writing the ledger. Fenced, it adds
 * {@code @EnableFencing}, {@code @EnableSchedulerLockFencing} mapping the job to "ledger", a JDBC fence store and
 * the JDBC lease issuer (leases as long as {@code lockAtMostFor}); unfenced, it is ShedLock alone.
 */
final class SchedulerApp implements AutoCloseable {

    static final String RESOURCE = "ledger";
    static final String LOCK = "ledger-job";
    static final Duration LOCK_AT_MOST_FOR = Duration.ofSeconds(2);
    static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";

    /** The tables of one test run, shared by its instances. */
    record Tables(String shedlock, String lease, String fence, String data) {

        static Tables unique() {
            String id = UUID.randomUUID().toString().replace("-", "").substring(0, 12);
            return new Tables("shedlock_" + id, "lease_" + id, "fence_" + id, "ledger_" + id);
        }

        void create(JdbcTemplate jdbc) {
            jdbc.execute("CREATE TABLE " + shedlock + " (name VARCHAR(64) NOT NULL PRIMARY KEY, "
                    + "lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL)");
            LedgerRows.create(jdbc, data);
        }

        /**
         * The job's ShedLock row now, its two times by the database's clock (ShedLock writes them so): until when
         * the lock is held, and when it was taken.
         */
        Timestamp[] lockTimes(JdbcTemplate jdbc) {
            return jdbc.queryForObject("SELECT lock_until, locked_at FROM " + shedlock + " WHERE name = ?",
                    (row, n) -> new Timestamp[] {row.getTimestamp(1), row.getTimestamp(2)}, LOCK);
        }

        void drop(JdbcTemplate jdbc) {
            for (String table : new String[] {shedlock, lease, fence, data}) {
                jdbc.execute("DROP TABLE IF EXISTS " + table);
            }
        }
    }

    /** Scheduler, ShedLock (method proxies, the default) and the job. */
    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    @EnableSchedulerLock(defaultLockAtMostFor = "PT10S")
    static class Scheduling {
    }

    /** The same under ShedLock's other intercept mode: the scheduler's Runnable is wrapped. */
    @Configuration(proxyBeanMethods = false)
    @EnableScheduling
    @EnableSchedulerLock(defaultLockAtMostFor = "PT10S",
            interceptMode = EnableSchedulerLock.InterceptMode.PROXY_SCHEDULER)
    static class SchedulerProxyScheduling {
    }

    /** The fence: @Fenced repositories checked, ShedLock's provider wrapped, the job mapped to the ledger. */
    @Configuration(proxyBeanMethods = false)
    @EnableFencing
    @EnableSchedulerLockFencing(resources = LOCK + "=" + RESOURCE, mappedOnly = true)
    static class Fencing {
    }

    /** The scheduled job: every 100 ms, under the ShedLock lock. */
    public static class LedgerJob {
        private final Ledger ledger;
        private final JobControl control;

        public LedgerJob(Ledger ledger, JobControl control) {
            this.ledger = ledger;
            this.control = control;
        }

        @Scheduled(fixedDelay = 100)
        @SchedulerLock(name = LOCK, lockAtMostFor = "PT2S")
        public void run() {
            control.run(ledger);
        }
    }

    final AnnotationConfigApplicationContext context;
    private final HikariDataSource pool;

    SchedulerApp(Tables tables, boolean fenced, JobControl control) {
        this(tables, fenced, control, false);
    }

    SchedulerApp(Tables tables, boolean fenced, JobControl control, boolean schedulerProxy) {
        pool = pool();
        context = new AnnotationConfigApplicationContext();
        try {
            context.registerBean("dataSource", HikariDataSource.class, () -> pool);
            context.registerBean(PlatformTransactionManager.class, () -> new DataSourceTransactionManager(pool));
            context.registerBean(LockProvider.class, () -> new JdbcTemplateLockProvider(
                    JdbcTemplateLockProvider.Configuration.builder().withJdbcTemplate(new JdbcTemplate(pool))
                            .withTableName(tables.shedlock()).usingDbTime().build()));
            context.registerBean(JobControl.class, () -> control);
            LedgerRows rows = new LedgerRows(pool, tables.data());
            if (fenced) {
                context.registerBean(TokenIssuer.class, () -> JdbcTokenIssuer.builder(pool).table(tables.lease())
                        .createTableIfMissing(true).leaseTime(LOCK_AT_MOST_FOR).build());
                context.registerBean(JdbcFenceStore.class, () -> JdbcFenceStore.builder(pool).table(tables.fence())
                        .createTableIfMissing(true)
                        .transactionManager(context.getBean(PlatformTransactionManager.class)).build());
                context.registerBean(Ledger.class, () -> new FencedLedger(rows));
                context.register(Fencing.class);
            } else {
                context.registerBean(Ledger.class, () -> new PlainLedger(rows));
            }
            context.registerBean(LedgerJob.class);
            context.register(schedulerProxy ? SchedulerProxyScheduling.class : Scheduling.class);
            context.refresh();
        } catch (RuntimeException | Error e) {
            context.close();
            pool.close();
            throw e;
        }
    }

    static HikariDataSource pool() {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(URL);
        config.setUsername("postgres");
        config.setPassword("");
        config.setMaximumPoolSize(4);
        config.setConnectionTimeout(10_000);
        return new HikariDataSource(config);
    }

    @Override
    public void close() {
        try {
            context.close();
        } finally {
            pool.close();
        }
    }
}
