package dev.fencing.verify.client;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.jdbc.JdbcDialect;
import dev.fencing.jdbc.JdbcFenceStore;
import dev.fencing.jdbc.JdbcTokenIssuer;
import dev.fencing.spring.EnableFencing;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;

import javax.sql.DataSource;

/**
 * The client's Spring context: a pooled PostgreSQL data source, its transaction manager, the JDBC fence store on
 * the run's fence table, the JDBC lease issuer on the run's lease table, and the lock-set service over a set
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

    @Bean
    TokenIssuer tokenIssuer(DataSource dataSource, ClientSettings settings) {
        return JdbcTokenIssuer.builder(dataSource).dialect(JdbcDialect.POSTGRESQL).table(settings.leaseTable())
                .leaseTime(settings.lease()).name("lease table " + settings.leaseTable()).build();
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
