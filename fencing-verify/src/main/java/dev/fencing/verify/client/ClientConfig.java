package dev.fencing.verify.client;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.etcd.EtcdTokenIssuer;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.spring.EnableFencing;
import dev.fencing.verify.cluster.Issuers;
import dev.fencing.verify.database.Database;
import dev.fencing.verify.database.DatabaseKind;
import dev.fencing.zookeeper.ZooKeeperTokenIssuer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;

import javax.sql.DataSource;

/**
 * The client's Spring context: a pooled data source on the store's database (PostgreSQL or MariaDB, from its URL),
 * its transaction manager, the JDBC fence store on the run's fence table and the run's issuer (the JDBC lease on the
 * run's lease table, on the store's database or another one; ZooKeeper; etcd). The workload's own beans come from
 * its configuration ({@link WorkloadDriver#configuration}).
 */
@Configuration(proxyBeanMethods = false)
@EnableTransactionManagement
@EnableFencing(acquireTimeoutMillis = ClientConfig.ACQUIRE_TIMEOUT_MILLIS)
public class ClientConfig {

    /** How long an acquisition waits for the lock before it fails (the lease is far shorter). */
    static final long ACQUIRE_TIMEOUT_MILLIS = 5_000;

    @Bean(destroyMethod = "close")
    HikariDataSource dataSource(ClientSettings settings) {
        return pool(Database.of(settings.jdbcUrl()).kind(), settings.jdbcUrl(), settings.user(), 3,
                "client-" + settings.process());     // the operation's transaction and the issuer's own, one spare
    }

    private static HikariDataSource pool(DatabaseKind kind, String url, String user, int size, String name) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(user);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(1);
        config.setConnectionTimeout(5_000);
        config.setPoolName(name);
        if (kind == DatabaseKind.MARIADB) {
            config.setDriverClassName("org.mariadb.jdbc.Driver");
        }
        return new HikariDataSource(config);
    }

    @Bean
    DataSourceTransactionManager transactionManager(DataSource dataSource) {
        return new DataSourceTransactionManager(dataSource);
    }

    @Bean
    JdbcFenceStore fenceStore(DataSource dataSource, PlatformTransactionManager transactionManager,
                              ClientSettings settings) {
        return JdbcFenceStore.builder(dataSource).dialect(Database.of(settings.jdbcUrl()).kind().dialect())
                .table(settings.fenceTable())
                .checkAtCommit(settings.checkAtCommit())
                .compacted(settings.compacted())    // the compact nemesis folds idle rows of this table
                .transactionManager(transactionManager).build();
    }

    /**
     * The run's issuer, closed with the context (ZooKeeper, etcd: the issuer, then its client; a JDBC lease on
     * another database than the store's: its own pool).
     */
    @Bean(destroyMethod = "close")
    IssuerSource issuerSource(DataSource dataSource, ClientSettings settings) {
        if (settings.issuer().equals("zookeeper")) {
            // the session timeout plays the lease: a holder paused past it loses its lock node
            Issuers.Handle<ZooKeeperTokenIssuer> handle = Issuers.zookeeper(settings.issuerAddress(), settings.lease());
            return new IssuerSource(handle.issuer(), handle);
        }
        if (settings.issuer().equals("etcd")) {
            // the session lease's TTL plays the lease: a holder paused past it loses its lock key
            Issuers.Handle<EtcdTokenIssuer> handle = Issuers.etcd(settings.issuerAddress(), settings.lease());
            return new IssuerSource(handle.issuer(), handle);
        }
        // the JDBC lease: on the store's database unless the issuer address names another one
        String leaseUrl = settings.issuerAddress().isEmpty() ? settings.jdbcUrl() : settings.issuerAddress();
        Database lease = Database.of(leaseUrl);
        DataSource leaseSource = dataSource;
        AutoCloseable closer = () -> { };
        if (!leaseUrl.equals(settings.jdbcUrl())) {
            HikariDataSource own = pool(lease.kind(), lease.url(), lease.user(), 2,
                    "client-" + settings.process() + "-lease");
            leaseSource = own;
            closer = own;
        }
        return new IssuerSource(JdbcTokenIssuer.builder(leaseSource).dialect(lease.kind().dialect())
                .table(settings.leaseTable()).leaseTime(settings.lease())
                .name("lease table " + settings.leaseTable()).build(), closer);
    }

    @Bean
    TokenIssuer tokenIssuer(IssuerSource source) {
        return source.issuer();
    }

    /** A token issuer and what closes it. */
    record IssuerSource(TokenIssuer issuer, AutoCloseable closer) implements AutoCloseable {
        @Override
        public void close() throws Exception {
            closer.close();
        }
    }
}
