package dev.fencing.verify.client;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.jdbc.JdbcDialect;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.spring.EnableFencing;
import dev.fencing.verify.cluster.Issuers;
import dev.fencing.zookeeper.ZooKeeperTokenIssuer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;

import javax.sql.DataSource;

/**
 * The client's Spring context: a pooled PostgreSQL data source, its transaction manager, the JDBC fence store on
 * the run's fence table, the run's issuer (the JDBC lease on the run's lease table, or ZooKeeper), and the lock-set service over a set
 * repository that is fenced or not ({@link ClientSettings#fence()}).
 */
@Configuration(proxyBeanMethods = false)
@EnableTransactionManagement
@EnableFencing(acquireTimeoutMillis = ClientConfig.ACQUIRE_TIMEOUT_MILLIS)
public class ClientConfig {

    /** How long an acquisition waits for the lock before it fails (the lease is far shorter). */
    static final long ACQUIRE_TIMEOUT_MILLIS = 5_000;

    @Bean(destroyMethod = "close")
    HikariDataSource dataSource(ClientSettings settings) {
        return pool(settings.jdbcUrl(), settings.user(), "client-" + settings.process());
    }

    private static HikariDataSource pool(String url, String user, String name) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(user);
        config.setMaximumPoolSize(3);       // the operation's transaction and the issuer's own, one spare
        config.setMinimumIdle(1);
        config.setConnectionTimeout(5_000);
        config.setPoolName(name);
        return new HikariDataSource(config);
    }

    @Bean
    DataSourceTransactionManager transactionManager(DataSource dataSource) {
        return new DataSourceTransactionManager(dataSource);
    }

    @Bean
    JdbcFenceStore fenceStore(DataSource dataSource, PlatformTransactionManager transactionManager,
                              ClientSettings settings) {
        return JdbcFenceStore.builder(dataSource).dialect(JdbcDialect.POSTGRESQL).table(settings.fenceTable())
                .transactionManager(transactionManager).build();
    }

    /** The run's issuer, closed with the context (for ZooKeeper: the issuer, then its Curator client). */
    @Bean(destroyMethod = "close")
    IssuerSource issuerSource(DataSource dataSource, ClientSettings settings) {
        if (settings.issuer().equals("zookeeper")) {
            // the session timeout plays the lease: a holder paused past it loses its lock node
            Issuers.Handle<ZooKeeperTokenIssuer> handle = Issuers.zookeeper(settings.issuerAddress(), settings.lease());
            return new IssuerSource(handle.issuer(), handle);
        }
        // an issuer address is the lease's own database URL (a client in a namespace reaches it on another address
        // than the store, so that a partition cuts the lease and not the store)
        HikariDataSource leaseSource = settings.issuerAddress().isEmpty() ? null
                : pool(settings.issuerAddress(), settings.user(), "lease-" + settings.process());
        return new IssuerSource(JdbcTokenIssuer.builder(leaseSource == null ? dataSource : leaseSource)
                .dialect(JdbcDialect.POSTGRESQL).table(settings.leaseTable()).leaseTime(settings.lease())
                .name("lease table " + settings.leaseTable()).build(), () -> {
                    if (leaseSource != null) {
                        leaseSource.close();
                    }
                });
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

    @Bean
    SetRows setRows(DataSource dataSource, ClientSettings settings) {
        JdbcSetRows plain = new JdbcSetRows(new JdbcTemplate(dataSource), settings.setTable());
        if (!settings.fence()) {
            return plain;
        }
        return settings.fenceReads() ? new FencedSetRows(plain) : new FencedSetRows.WritesOnly(plain);
    }

    @Bean
    LockSetService lockSetService(SetRows setRows, ClientSettings settings) {
        return new LockSetService(setRows, settings.maxSleep().toMillis());
    }
}
