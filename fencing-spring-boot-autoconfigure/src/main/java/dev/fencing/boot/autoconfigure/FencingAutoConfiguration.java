package dev.fencing.boot.autoconfigure;

import dev.fencing.annotation.Fenced;
import dev.fencing.spring.EnableFencing;
import dev.fencing.spring.FencingConfigurer;
import dev.fencing.store.FenceStore;
import dev.fencing.store.InMemoryFenceStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.ClassUtils;

import java.time.Duration;

/**
 * Turns fencing on in a Spring Boot application whenever {@code @Fenced} is on the classpath, as
 * {@code @EnableFencing} (PROXY mode) would, unless the application declares {@code @EnableFencing} itself (then
 * this backs off and the annotation's settings apply) or sets {@code fencing.enabled=false}.
 *
 * <p>Ordered after Spring Boot's transaction auto-configuration, so the fence advisor, which has the transaction
 * advisor's order ({@code Ordered.LOWEST_PRECEDENCE}), is registered after it and runs inside the transaction when a
 * method is both {@code @Transactional} and {@code @Fenced}: Boot's transaction configuration stays as it is.
 */
@AutoConfiguration(afterName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
        "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration"})
@ConditionalOnClass({Fenced.class, EnableFencing.class})
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
@EnableConfigurationProperties(FencingProperties.class)
public class FencingAutoConfiguration {

    private static final Log log = LogFactory.getLog(FencingAutoConfiguration.class);

    /** The bean {@code @EnableFencing} registers in either mode: present when the application enabled it itself. */
    static final String FENCING_SUPPORT_BEAN = "dev.fencing.internalFencingSupport";

    private static final String JDBC_STORE_CLASS = "dev.fencing.jdbc.JdbcFenceStore";

    /** {@code fencing.store.type=in-memory}: one JVM only, said at startup. */
    @Bean
    @ConditionalOnMissingBean(FenceStore.class)
    @ConditionalOnProperty(name = "fencing.store.type", havingValue = "in-memory")
    InMemoryFenceStore fenceStore() {
        log.warn("fencing.store.type=in-memory: using an InMemoryFenceStore, which fences writes made inside this "
                + "JVM only; for tests and demos, never for a resource shared by several instances");
        return new InMemoryFenceStore();
    }

    /** What {@code @EnableFencing} imports, when the application did not declare it. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingBean(name = FENCING_SUPPORT_BEAN)
    @EnableFencing
    static class EnableFencingConfiguration {

        @Bean
        FencingConfigurer fencingPropertiesConfigurer(FencingProperties properties) {
            return new PropertiesConfigurer(properties);
        }
    }

    /** The {@code fencing.*} properties {@code @EnableFencing}'s support reads, and a startup failure for Boot users. */
    static final class PropertiesConfigurer implements FencingConfigurer {

        private final FencingProperties properties;

        PropertiesConfigurer(FencingProperties properties) {
            this.properties = properties;
        }

        @Override
        public Duration acquireTimeout() {
            return properties.getAcquireTimeout();
        }

        @Override
        public String missingStoreMessage() {
            return missingStoreMessage(ClassUtils.isPresent(JDBC_STORE_CLASS, getClass().getClassLoader()));
        }

        static String missingStoreMessage(boolean jdbcPresent) {
            String cause = jdbcPresent
                    ? "fencing-jdbc is on the classpath but the application has no DataSource bean"
                    : "fencing-jdbc is not on the classpath";
            return "The fencing starter found no FenceStore for the @Fenced methods (" + cause + "). Tokens must be "
                    + "checked where the writes land, by every instance of the application, so fencing needs a shared "
                    + "store. Add "
                    + (jdbcPresent ? "" : "the dependency dev.fencing:fencing-jdbc and ")
                    + "a database (spring.datasource.url, with the fence table fencing_max_seen or the one "
                    + "fencing.store.jdbc.table names: see the README), or declare your own FenceStore bean. For tests "
                    + "and demos in a single JVM only: fencing.store.type=in-memory. To run @Fenced methods unchecked: "
                    + "fencing.enabled=false.";
        }
    }
}
