package dev.fencing.jdbc;

import dev.fencing.FencingConfigurationException;
import dev.fencing.issuer.AbstractLease;
import dev.fencing.issuer.Lease;
import dev.fencing.issuer.LockAcquisitionException;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.IssuerMetrics;
import dev.fencing.token.FencingToken;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A {@link TokenIssuer} for applications that only have a database: a lease table with one row per resource
 * (resource, holder, token, expires_at). Acquiring succeeds when the lease is free or expired, and advances the
 * row's token in the same transaction, so tokens are durable, per resource, and strictly increasing across
 * restarts. Works on PostgreSQL, MariaDB and H2; times come from the database's clock.
 *
 * <p><b>The trade-off:</b> this is a lease on wall-clock time with no keep-alive. A holder that runs longer than
 * the lease (a pause, a slow call) loses it to the next acquirer without noticing, exactly the zombie case. What
 * keeps the data safe is the fence (max_seen checked at the resource), not the lease: pair it with a fence store.
 *
 * <p>The lease table is checked by {@link #verify()} at the end of application context startup (after the
 * application's database initialization), or before the first acquire outside a Spring context.
 */
public final class JdbcTokenIssuer implements TokenIssuer, SmartInitializingSingleton {

    /** The default lease table. */
    public static final String DEFAULT_TABLE = "fencing_lease";


    private final JdbcTemplate jdbc;
    private final TransactionTemplate transactions;
    private final LeaseDialect dialect;
    private final String table;
    private final Duration leaseTime;
    private final String name;
    private final IssuerMetrics metrics;
    private final String ensureRowSql;
    private final String lockRowSql;
    private final String takeSql;
    private final String releaseSql;
    private final boolean createTable;
    private final boolean verifyAtStartup;
    private volatile boolean verified;

    private JdbcTokenIssuer(Builder b, LeaseDialect dialect) {
        this.jdbc = new JdbcTemplate(b.dataSource);
        this.transactions = new TransactionTemplate(new DataSourceTransactionManager(b.dataSource));
        this.transactions.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
        this.dialect = dialect;
        this.table = b.table;
        this.leaseTime = b.leaseTime;
        this.name = b.name != null ? b.name : "the database behind " + b.dataSource;
        this.metrics = new IssuerMetrics(b.registry, "jdbc");
        this.ensureRowSql = dialect.ensureRowSql(table);
        this.lockRowSql = dialect.lockRowSql(table);
        this.takeSql = dialect.takeSql(table);
        this.releaseSql = dialect.releaseSql(table);
        this.createTable = b.createTable;
        this.verifyAtStartup = b.verify;
    }

    /** Starts a builder for an issuer on {@code dataSource}. */
    public static Builder builder(DataSource dataSource) {
        return new Builder(dataSource);
    }

    @Override
    public Lease acquire(String resource, Duration timeout) {
        TokenIssuer.checkAcquire(resource, timeout);
        ensureVerified(resource);
        FencingToken probe = new FencingToken(resource, 1, "probe"); // validates the resource as a token would
        long deadline = System.nanoTime() + timeout.toNanos();
        String holder = "jdbc-" + UUID.randomUUID();
        long pause = 20;
        RuntimeException lastError = null;
        while (true) {
            long attemptStarted = System.nanoTime();
            try {
                Long token = tryTake(probe.resource(), holder);
                if (token != null) {
                    metrics.acquired();
                    return new JdbcLease(new FencingToken(resource, token, holder), attemptStarted + leaseTime.toNanos());
                }
                lastError = null;
            } catch (DataAccessException | TransactionException e) {
                lastError = e; // unreachable or failing database: keep trying until the deadline
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                metrics.failed();
                if (lastError != null) {
                    throw new LockAcquisitionException(resource, "Could not lock resource '" + resource + "' in "
                            + name + " within " + timeout.toMillis() + " ms: " + lastError.getMessage(), lastError);
                }
                throw new LockAcquisitionException(resource, "Timed out after " + timeout.toMillis()
                        + " ms waiting for the database lease on resource '" + resource + "' (" + name + ")");
            }
            try {
                Thread.sleep(Math.min(pause, TimeUnit.NANOSECONDS.toMillis(left) + 1));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                metrics.failed();
                throw new LockAcquisitionException(resource, "Interrupted while locking resource '" + resource + "'", e);
            }
            pause = Math.min(pause * 2, 250);
        }
    }

    /**
     * One attempt, in its own transaction: the token if the lease was free or expired, else {@code null}. The row
     * is locked first and created only when missing, so the common path takes no shared lock (on InnoDB an
     * insert-if-absent on an existing row takes one, and two of them deadlock on the upgrade).
     */
    private Long tryTake(String resource, String holder) {
        return transactions.execute(status -> {
            Object[] row = lockRow(resource);
            if (row == null) {
                try {
                    jdbc.update(ensureRowSql, resource);
                } catch (DuplicateKeyException raced) {
                    // another transaction inserted the row first (H2's MERGE): it exists now, which is all we need
                }
                row = lockRow(resource);
            }
            if (((Integer) row[1]) == 0) {
                return null;
            }
            jdbc.update(takeSql, holder, dialect.ttlParameter(leaseTime.toMillis()), resource);
            return (Long) row[0] + 1;
        });
    }

    private Object[] lockRow(String resource) {
        return jdbc.query(lockRowSql, rs -> rs.next() ? new Object[] {rs.getLong(1), rs.getInt(2)} : null, resource);
    }

    @Override
    public void release(Lease lease) {
        if (!(lease instanceof JdbcLease jdbcLease) || jdbcLease.issuer() != this) {
            throw new IllegalArgumentException("Lease " + lease + " was not issued by this JdbcTokenIssuer");
        }
        if (!jdbcLease.markReleased()) {
            return;
        }
        // frees the row only if this acquisition still holds it: a lease that expired and was taken is left alone,
        // and counted as lost
        for (int attempt = 1; ; attempt++) {
            try {
                if (jdbc.update(releaseSql, jdbcLease.token().resource(), jdbcLease.token().holder()) == 0) {
                    metrics.lost();
                }
                return;
            } catch (TransientDataAccessException e) { // a deadlock victim or lock timeout: the update is safe to repeat
                if (attempt == 5) {
                    throw e;
                }
            }
        }
    }

    /** The lease table name, as configured. */
    public String table() {
        return table;
    }

    /**
     * Checks the lease table once: creates it first when configured to, checks the column types and widths, and
     * locks probe rows inside a transaction it rolls back (the table exists, and resources differing only in case
     * or trailing spaces stay distinct). Runs at the end of application context startup when the issuer is a Spring
     * singleton built with {@code verifyOnBuild(true)} (the default), else before the first acquire. Idempotent; a
     * failed verification is repeated on the next call.
     *
     * @throws FencingConfigurationException naming the table, the column and the fix
     */
    public void verify() {
        if (verified) {
            return;
        }
        synchronized (this) {
            if (verified) {
                return;
            }
            FenceDialect fenceDialect = FenceDialect.valueOf(dialect.name());
            String script = "classpath:dev/fencing/jdbc/lease-" + dialect.name().toLowerCase(java.util.Locale.ROOT)
                    + ".sql";
            try {
                // in transactions of their own (REQUIRES_NEW): a lazy first verify never joins the caller's
                if (createTable) {
                    transactions.executeWithoutResult(status -> jdbc.execute(dialect.createTableSql(table)));
                }
                transactions.executeWithoutResult(status -> Dialects.requireColumns(jdbc, fenceDialect,
                        "Lease table", table, script, java.util.Map.of(
                                "resource", Dialects.ColumnNeed.TEXT,
                                "holder", Dialects.ColumnNeed.TEXT,
                                "token", Dialects.ColumnNeed.BIGINT)));
                String probe = "fencing-startup-probe:Ab";
                String merged = transactions.execute(status -> {
                    status.setRollbackOnly();
                    lockRow(probe);
                    jdbc.update(ensureRowSql, probe);
                    for (String other : new String[] {"fencing-startup-probe:aB", probe + " "}) {
                        if (lockRow(other) != null) {
                            return other;
                        }
                    }
                    return null;
                });
                if (merged != null) {
                    throw new FencingConfigurationException("Lease table '" + table + "' column 'resource' "
                            + "compares '" + probe + "' and '" + merged + "' as equal (case-insensitive or "
                            + "space-padded), so distinct resources would share one lease; give it an exact "
                            + "(binary, no-pad) comparison: " + fenceDialect.alterColumnSql(table, "resource")
                            + " (and the same for 'holder'), or recreate the table with " + script);
                }
            } catch (DataAccessException | TransactionException e) {
                throw new FencingConfigurationException("Lease table '" + table + "' is missing or unusable ("
                        + (e instanceof DataAccessException dae ? dae.getMostSpecificCause().getMessage()
                        : e.getMessage()) + "). Create it with the script " + script
                        + ", or build the issuer with createTableIfMissing(true)", e);
            }
            verified = true;
        }
    }

    /** Verifies the lease table once every singleton exists (after database initialization), unless disabled. */
    @Override
    public void afterSingletonsInstantiated() {
        if (verifyAtStartup) {
            verify();
        }
    }

    private void ensureVerified(String resource) {
        if (!verified) {
            try {
                verify();
            } catch (FencingConfigurationException e) {
                metrics.failed();
                throw new LockAcquisitionException(resource, "Cannot lock resource '" + resource + "' in " + name
                        + ": the lease table failed its check: " + e.getMessage(), e);
            }
        }
    }

    private final class JdbcLease extends AbstractLease {
        final long expiresAtNanos;

        JdbcLease(FencingToken token, long expiresAtNanos) {
            super(token);
            this.expiresAtNanos = expiresAtNanos;
        }

        JdbcTokenIssuer issuer() {
            return JdbcTokenIssuer.this;
        }

        /** Released, or past its lease time as measured from before the acquiring statement was sent. */
        @Override
        public boolean isLost() {
            return super.isLost() || System.nanoTime() - expiresAtNanos >= 0;
        }
    }

    /**
     * Configures a {@link JdbcTokenIssuer}. Defaults: table {@value #DEFAULT_TABLE}, leases of 30 seconds, dialect
     * detected, table checked at the end of context startup (or before the first acquire).
     */
    public static final class Builder {
        private final DataSource dataSource;
        private FenceDialect dialect;
        private String table = DEFAULT_TABLE;
        private Duration leaseTime = Duration.ofSeconds(30);
        private boolean createTable;
        private boolean verify = true;
        private String name;
        private MeterRegistry registry;

        private Builder(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        public Builder dialect(FenceDialect dialect) {
            this.dialect = Objects.requireNonNull(dialect, "dialect");
            return this;
        }

        /** The lease table, optionally schema-qualified: letters, digits and underscores only. */
        public Builder table(String table) {
            this.table = table;
            return this;
        }

        /** How long a lease lasts; there is no keep-alive, choose it longer than the critical section. */
        public Builder leaseTime(Duration leaseTime) {
            this.leaseTime = Objects.requireNonNull(leaseTime, "leaseTime");
            return this;
        }

        public Builder createTableIfMissing(boolean createTable) {
            this.createTable = createTable;
            return this;
        }

        /**
         * Whether {@link #build()} connects to detect the dialect and the table is checked at the end of application
         * context startup (default). Turn off only to start while the database may be down; then the dialect must be
         * set, and the first acquire checks the table and reports what is wrong.
         */
        public Builder verifyOnBuild(boolean verify) {
            this.verify = verify;
            return this;
        }

        /** How messages name the database (default: the data source's {@code toString()}). */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        public Builder meterRegistry(MeterRegistry registry) {
            this.registry = registry;
            return this;
        }

        /**
         * Checks the table name and lease time, detects (or checks) the dialect and builds the issuer. The table is
         * checked later, by {@link JdbcTokenIssuer#verify()}, so that database initialization can create it first.
         *
         * @throws FencingConfigurationException when the table name or lease time is invalid, or the database is
         *                                       unreachable, unsupported or not the configured dialect
         */
        public JdbcTokenIssuer build() {
            Dialects.requireTableName("JdbcTokenIssuer", table);
            if (leaseTime.toMillis() < 1) {
                throw new FencingConfigurationException("JdbcTokenIssuer leaseTime must be at least 1 ms, was " + leaseTime);
            }
            if (!verify) {
                if (dialect == null) {
                    throw new FencingConfigurationException("JdbcTokenIssuer.verifyOnBuild(false) needs an explicit dialect");
                }
                return new JdbcTokenIssuer(this, LeaseDialect.of(dialect));
            }
            FenceDialect detected = Dialects.detect(dataSource, dialect, "JdbcTokenIssuer");
            JdbcTokenIssuer issuer = new JdbcTokenIssuer(this, LeaseDialect.of(detected));
            return issuer;
        }
    }
}
