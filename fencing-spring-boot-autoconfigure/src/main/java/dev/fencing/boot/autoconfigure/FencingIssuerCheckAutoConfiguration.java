package dev.fencing.boot.autoconfigure;

import dev.fencing.issuer.IssuerBase;
import dev.fencing.issuer.TokenIssuer;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

import javax.sql.DataSource;
import java.util.OptionalLong;

/**
 * {@code fencing.issuer.check-fence-store} (on by default): startup fails when the application's one-sequence issuer
 * (ZooKeeper, etcd) counts below the fence store's highest max_seen, the sign of a move to a new issuer without
 * {@code fencing.issuer.offset.base}, or below the highest token of a JDBC lease table on the application's
 * DataSource (the previous issuer's, whose paused holders' tokens no fence store has seen); turned off, the same
 * finding is a warning in the log. Ordered after the store
 * and issuer auto-configurations, so it runs after the fence table was verified (or created).
 */
@AutoConfiguration(after = {FencingAutoConfiguration.class, FencingJdbcAutoConfiguration.class,
        FencingZooKeeperAutoConfiguration.class, FencingEtcdAutoConfiguration.class,
        FencingIssuerOffsetAutoConfiguration.class})
@ConditionalOnClass(TokenIssuer.class)
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
public class FencingIssuerCheckAutoConfiguration {

    @Bean
    IssuerCounterCheck fencingIssuerCounterCheck(ObjectProvider<TokenIssuer> issuers, BeanFactory beanFactory,
                                                 Environment environment) {
        return new IssuerCounterCheck(issuers, () -> FenceStoreInventory.of(beanFactory),
                new StoredOffsets(beanFactory, environment),
                () -> beanFactory.getBeanProvider(IssuerBase.class).getIfAvailable() != null || JdbcOffsetParts.PRESENT
                        && beanFactory.getBeanProvider(DataSource.class).getIfAvailable() != null,
                environment.getProperty(IssuerCounterCheck.PROPERTY, Boolean.class, true),
                issuer -> JdbcOffsetParts.PRESENT ? JdbcOffsetParts.oldLeaseTokens(beanFactory, environment, issuer)
                        : OptionalLong.empty(),
                environment.getProperty(JdbcOffsetParts.LEASE_TABLE, "fencing_lease"));
    }
}
