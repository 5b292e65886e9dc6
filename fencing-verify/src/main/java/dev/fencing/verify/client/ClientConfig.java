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
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;

import javax.sql.DataSource;

/**
 * The client's Spring context: a pooled PostgreSQL data source, its transaction manager, the JDBC fence store on
 * the run's fence table and the run's issuer (the JDBC lease on the run's lease table, or ZooKeeper). The workload's
 * own beans come from its configuration ({@link WorkloadDriver#configuration}).
 */
@Configuration(proxyBeanMethods = false)
@EnableTransactionManagement
@EnableFencing(acquireTimeoutMillis = ClientConfig.ACQUIRE_TIMEOUT_MILLIS)
public class ClientConfig {

    /** How long an acquisition waits for the lock before it fails (the lease is far shorter). */
    static final long ACQUIRE_TIMEOUT_MILLIS = 5_000;

    @Bean(destroyMethod = "close")
    HikariDataSource dataSource(ClientSettings settings) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(settings.jdbcUrl());
        config.setUsername(settings.user());
        config.setMaximumPoolSize(3);       // the operation's transaction and the issuer's own, one spare
        config.setMinimumIdle(1);
        config.setConnectionTimeout(5_000);
        config.setPoolName("client-" + settings.process());
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
        return new IssuerSource(JdbcTokenIssuer.builder(dataSource).dialect(JdbcDialect.POSTGRESQL)
                .table(settings.leaseTable()).leaseTime(settings.lease())
                .name("lease table " + settings.leaseTable()).build(), () -> { });
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
