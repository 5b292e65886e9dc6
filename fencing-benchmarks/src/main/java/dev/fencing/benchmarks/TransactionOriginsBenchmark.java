package dev.fencing.benchmarks;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.jdbc.TransactionOrigins;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionCallback;
import org.springframework.transaction.support.TransactionTemplate;

import javax.sql.DataSource;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.util.concurrent.TimeUnit;

/**
 * What listening to a transaction manager ({@link TransactionOrigins}, which the starter and a {@code JdbcFenceStore}
 * bean switch on for every manager of the application) adds to each transaction, single thread: a
 * {@link TransactionTemplate} transaction, begun and committed by a {@link DataSourceTransactionManager} on a
 * connection that does nothing (so the database's time, hundreds of microseconds for a real one, is left out), with
 * and without the listener, and one nested inside another manager's transaction; for scale, the same on
 * PostgreSQL ({@link Postgres}: one {@code SELECT 1} in the transaction, a pool of one connection, the URL from
 * {@code -Dbench.jdbcUrl}).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class TransactionOriginsBenchmark {

    private final TransactionTemplate plain = new TransactionTemplate(new DataSourceTransactionManager(idle()));
    private final TransactionTemplate plainOuter = new TransactionTemplate(new DataSourceTransactionManager(idle()));
    private final TransactionTemplate listened = listened("'listened'");
    private final TransactionTemplate listenedOuter = listened("'outer'");
    private final TransactionCallback<Object> body = status -> status;
    private final TransactionCallback<Object> nestedPlain = status -> plain.execute(body);
    private final TransactionCallback<Object> nestedListened = status -> listened.execute(body);

    private static TransactionTemplate listened(String name) {
        DataSourceTransactionManager manager = new DataSourceTransactionManager(idle());
        TransactionOrigins.listenTo(manager, name);
        return new TransactionTemplate(manager);
    }

    /** A data source whose connections accept every call and do nothing: auto-commit on, as a pool hands them out. */
    private static DataSource idle() {
        Connection connection = (Connection) Proxy.newProxyInstance(TransactionOriginsBenchmark.class.getClassLoader(),
                new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                    Class<?> type = method.getReturnType();
                    if (method.getName().equals("getAutoCommit")) {
                        return true;
                    }
                    return type == boolean.class ? Boolean.FALSE : type == int.class ? 0 : null;
                });
        return (DataSource) Proxy.newProxyInstance(TransactionOriginsBenchmark.class.getClassLoader(),
                new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    if (method.getName().equals("getConnection")) {
                        return connection;
                    }
                    Class<?> type = method.getReturnType();
                    return type == boolean.class ? Boolean.FALSE : type == int.class ? 0 : null;
                });
    }

    /** A transaction on PostgreSQL, by a manager that is listened to and by one that is not, on one pool. */
    @State(Scope.Benchmark)
    public static class Postgres {
        HikariDataSource pool;
        TransactionTemplate plain;
        TransactionTemplate listened;
        JdbcTemplate jdbc;
        TransactionCallback<Integer> select;

        @Setup(Level.Trial)
        public void open() {
            HikariConfig config = BenchDatabase.POSTGRESQL.poolConfig();
            config.setMaximumPoolSize(1);
            pool = new HikariDataSource(config);
            jdbc = new JdbcTemplate(pool);
            plain = new TransactionTemplate(new DataSourceTransactionManager(pool));
            DataSourceTransactionManager manager = new DataSourceTransactionManager(pool);
            TransactionOrigins.listenTo(manager, "'postgres'");
            listened = new TransactionTemplate(manager);
            select = status -> jdbc.queryForObject("SELECT 1", Integer.class);
        }

        @TearDown(Level.Trial)
        public void close() {
            pool.close();
        }
    }

    @Benchmark
    public Object postgresTransaction(Postgres postgres) {
        return postgres.plain.execute(postgres.select);
    }

    @Benchmark
    public Object listenedPostgresTransaction(Postgres postgres) {
        return postgres.listened.execute(postgres.select);
    }

    @Benchmark
    public Object transaction() {
        return plain.execute(body);
    }

    @Benchmark
    public Object listenedTransaction() {
        return listened.execute(body);
    }

    @Benchmark
    public Object nestedTransaction() {
        return plainOuter.execute(nestedPlain);
    }

    @Benchmark
    public Object listenedNestedTransaction() {
        return listenedOuter.execute(nestedListened);
    }
}
