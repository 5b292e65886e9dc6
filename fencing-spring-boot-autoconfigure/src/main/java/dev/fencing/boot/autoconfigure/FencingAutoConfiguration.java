package dev.fencing.boot.autoconfigure;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import dev.fencing.issuer.InMemoryTokenIssuer;
import dev.fencing.issuer.TokenIssuer;
import dev.fencing.metrics.FencingMetrics;
import dev.fencing.reactive.InMemoryReactiveFenceStore;
import dev.fencing.reactive.LeftScopesOnSchedulers;
import dev.fencing.reactive.ReactiveFenceStore;
import dev.fencing.mode.FenceMode;
import dev.fencing.spring.EnableFencing;
import dev.fencing.spring.FencingConfigurer;
import dev.fencing.store.FenceStore;
import dev.fencing.store.InMemoryFenceStore;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.BeanClassLoaderAware;
import org.springframework.beans.factory.BeanFactoryUtils;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.SearchStrategy;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import javax.sql.DataSource;

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
        "org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration",
        // Boot orders its R2dbcTransactionManagerAutoConfiguration after R2dbcAutoConfiguration by @AutoConfigureOrder
        // only: being after TransactionAutoConfiguration (which that one precedes) without this would pull it ahead
        // of the ConnectionFactory it needs, and a reactive application would have no R2dbcTransactionManager
        "org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration"})
@ConditionalOnClass({Fenced.class, EnableFencing.class})
@ConditionalOnBooleanProperty(name = "fencing.enabled", matchIfMissing = true)
@EnableConfigurationProperties(FencingProperties.class)
public class FencingAutoConfiguration {

    private static final Log log = LogFactory.getLog(FencingAutoConfiguration.class);

    /** The bean {@code @EnableFencing} registers in either mode: present when the application enabled it itself. */
    static final String FENCING_SUPPORT_BEAN = "dev.fencing.internalFencingSupport";

    private static final String JDBC_STORE_CLASS = "dev.fencing.jdbc.JdbcFenceStore";

    /**
     * Once every singleton exists, with {@code fencing.store.jdbc.max-advance} set: fails startup where the bound
     * would refuse real holders or bound nothing. An issuer of one sequence for every resource (ZooKeeper, etcd)
     * moves a rarely written resource's next token by every write elsewhere (and ZooKeeper's by 2^32 at a leader
     * election); an issuer offset moves every resource's next token by its base; and a reactive store of the
     * starter's alone (R2DBC) has no such bound. Beside a blocking store that applies it, the reactive store's
     * methods going unbounded is a warning.
     */
    @Bean
    static SmartInitializingSingleton fencingMaxAdvanceCheck(ConfigurableListableBeanFactory beans,
                                                            Environment environment) {
        return () -> MaxAdvanceCheck.check(beans, environment);
    }

    /** {@code fencing.store.type=in-memory}: one JVM only, said at startup. */
    @Bean
    @ConditionalOnMissingBean(FenceStore.class)
    @ConditionalOnFencingType(store = FencingProperties.StoreType.IN_MEMORY)
    InMemoryFenceStore fenceStore(FencingProperties properties) {
        log.warn("fencing.store.type=in-memory: using an InMemoryFenceStore, which fences writes made inside this "
                + "JVM only; for tests and demos, never for a resource shared by several instances");
        Long maxAdvance = properties.getStore().getJdbc().getMaxAdvance();
        if (maxAdvance == null) {
            return new InMemoryFenceStore();
        }
        if (maxAdvance < 1) {
            throw new FencingConfigurationException("fencing.store.jdbc.max-advance must be at least 1, was "
                    + maxAdvance + "; leave it unset for no bound on one advance");
        }
        // the bound the database store would apply: a test on the in-memory store refuses what production refuses
        return InMemoryFenceStore.builder().maxAdvance(maxAdvance).build();
    }

    /**
     * {@code fencing.store.type=in-memory} with fencing-reactor on the classpath: the in-memory store of reactive
     * {@code @Fenced} methods too, under the same opt-in and warning as the blocking one.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(InMemoryReactiveFenceStore.class)
    @ConditionalOnFencingType(store = FencingProperties.StoreType.IN_MEMORY)
    static class InMemoryReactiveStoreConfiguration {

        @Bean
        @ConditionalOnMissingBean(ReactiveFenceStore.class)
        InMemoryReactiveFenceStore reactiveFenceStore() {
            log.warn("fencing.store.type=in-memory: using an InMemoryReactiveFenceStore for reactive @Fenced "
                    + "methods, which fences writes made inside this JVM only; for tests and demos, never for a "
                    + "resource shared by several instances");
            return new InMemoryReactiveFenceStore();
        }
    }

    /**
     * With fencing-reactor: a task a Reactor scheduler runs that leaves a fencing scope open on its pooled worker
     * ({@code boundedElastic}, say) has it closed when the task ends, logged and counted, so the next task there does
     * not run under its token. One JVM-wide schedule hook: when the context closes, another context of this JVM that
     * installed it runs it again, or it is removed.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(LeftScopesOnSchedulers.class)
    static class LeftScopesOnSchedulersConfiguration {

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        LeftScopesOnSchedulers fencingLeftScopesOnSchedulers(ObjectProvider<MeterRegistry> registry) {
            return new LeftScopesOnSchedulers(new FencingMetrics(registry.getIfUnique())).install();
        }
    }

    /** Fails startup when {@code fencing.issuer.type} names an issuer that no bean provides. */
    @Bean
    static IssuerTypeCheck fencingIssuerTypeCheck(Environment environment) {
        String raw = environment.getProperty(OnFencingTypeCondition.ISSUER_TYPE, "").trim();
        String simple = raw.toLowerCase(java.util.Locale.ROOT);
        if (simple.equals("redisson") || simple.equals("hazelcast")) {
            // the issuers the starter does not build: Boot's binding failure would only list the values it knows
            String issuer = simple.equals("redisson") ? "RedissonTokenIssuer (fencing-redisson)"
                    : "HazelcastTokenIssuer (fencing-hazelcast)";
            String built = java.util.Arrays.stream(FencingProperties.IssuerType.values())
                    .map(type -> type.name().toLowerCase(java.util.Locale.ROOT))
                    .collect(java.util.stream.Collectors.joining(", "));
            throw new FencingConfigurationException("fencing.issuer.type=" + raw + " is not a type the starter "
                    + "builds (" + built + "): declare the issuer as a bean instead, a " + issuer
                    + " on your own client (docs/issuers.md shows the bean), and the starter uses it for "
                    + "@Fenced(acquire = true); then remove fencing.issuer.type");
        }
        return new IssuerTypeCheck(Binder.get(environment).bind(OnFencingTypeCondition.ISSUER_TYPE,
                FencingProperties.IssuerType.class).orElse(FencingProperties.IssuerType.NONE));
    }

    /** Fails startup on a {@code fencing.*} property the starter does not know (a misspelt key). */
    @Bean
    static PropertyNamesCheck fencingPropertyNamesCheck(Environment environment) {
        return new PropertyNamesCheck(environment, FencingAutoConfiguration.class.getClassLoader());
    }

    /**
     * Spring AMQP without fencing-amqp, which the starter brings (so it was excluded): listener containers ignore the
     * {@code Fencing-Token} header, and an acquiring method a listener reaches writes a sender's (perhaps a zombie's)
     * message under a lock of its own; said at startup.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.amqp.rabbit.listener.RabbitListenerEndpointRegistry")
    @ConditionalOnMissingClass("dev.fencing.amqp.FencingTokenListenerAdvice")
    static class WithoutFencingAmqp {

        static final String WARNING = "Spring AMQP is on the class path but fencing-amqp, which the fencing starter "
                + "brings, is not (excluded?): Rabbit listener containers ignore the Fencing-Token header, so a "
                + "@Fenced(acquire = true) method a listener reaches writes a sender's message (perhaps a zombie's) "
                + "under a lock of its own, and a fenced write it reaches is refused as missing. Keep "
                + "dev.fencing:fencing-amqp on the class path; see docs/propagation.md, \"Another process over "
                + "RabbitMQ\"";

        WithoutFencingAmqp() {
            log.warn(WARNING);
        }
    }

    /**
     * A servlet application with fencing-web and Spring MVC whose {@link FencingWebAutoConfiguration} did not run
     * (excluded): a {@code Fencing-Token} header is neither admitted nor refused, so an acquiring method writes a
     * caller's request (perhaps a zombie's) under a lock of its own, and a scope a request leaves open stays on its
     * pooled thread; said at startup.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
    @ConditionalOnClass(name = {"dev.fencing.web.UnadmittedTokenInterceptor",
            "org.springframework.web.servlet.config.annotation.WebMvcConfigurer"})
    static class WithoutFencingWeb {

        static final String WARNING = "fencing-web is on the class path of this Spring MVC application, but "
                + "FencingWebAutoConfiguration did not run (excluded?): a Fencing-Token header is neither admitted "
                + "nor refused, so a @Fenced(acquire = true) method writes a caller's request (perhaps a zombie's) "
                + "under a lock of its own, a fenced write it reaches is refused as missing, and a fencing scope a "
                + "request leaves open stays bound on its pooled thread. Let it run (exclude the beans you replace, "
                + "not the auto-configuration); see docs/propagation.md";

        @Bean
        static SmartInitializingSingleton fencingWithoutWebWarning(ListableBeanFactory beans) {
            return () -> {
                if (!beans.containsBean("fencingUnadmittedTokenInterceptor")) {
                    log.warn(WARNING);
                }
            };
        }
    }

    /**
     * A WebFlux application with fencing-web whose {@link FencingWebFluxAutoConfiguration} did not run (excluded): no
     * filter refuses a {@code Fencing-Token} header the application does not admit, no handler answers the library's
     * exceptions as problem details, and a scope left open on an event loop stays there; said at startup, as for
     * Spring MVC ({@link WithoutFencingWeb}).
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
    @ConditionalOnClass(name = {"dev.fencing.web.reactive.FencingWebExceptionHandler",
            "org.springframework.web.server.WebFilter"})
    static class WithoutFencingWebFlux {

        static final String WARNING = "fencing-web is on the class path of this WebFlux application, but "
                + "FencingWebFluxAutoConfiguration did not run (excluded?): a Fencing-Token header no "
                + "FencingTokenWebFilter of the application admits is not refused, so a @Fenced(acquire = true) "
                + "method writes a caller's request (perhaps a zombie's) under a lock of its own; the library's "
                + "refusals are not answered as problem details (FencingWebExceptionHandler), and a fencing scope "
                + "left open on an event-loop thread stays bound there (LeftBindingsWebFilter). Let it run (exclude "
                + "the beans you replace, not the auto-configuration); see docs/propagation.md";

        @Bean
        static SmartInitializingSingleton fencingWithoutWebFluxWarning(ListableBeanFactory beans) {
            return () -> {
                if (beans.getBeanNamesForType(FencingWebFluxAutoConfiguration.class, false, false).length == 0) {
                    log.warn(WARNING);
                }
            };
        }
    }

    /** {@code fencing.admin.enabled=true} in an application that serves no admin operation: said at startup. */
    @Bean
    static UnservedAdminWarning fencingUnservedAdminWarning(ConfigurableListableBeanFactory beans,
                                                            Environment environment) {
        return new UnservedAdminWarning(beans, environment);
    }

    /**
     * A fence store or token issuer the application declared that keeps its state in this JVM: another instance's
     * writes and locks are not seen; said at startup, as {@code fencing.store.type=in-memory} is. A
     * {@code fencing.issuer.type} set beside an issuer bean of the application is said to have no effect.
     */
    @Bean
    static SmartInitializingSingleton fencingApplicationBeansWarning(ConfigurableListableBeanFactory beanFactory,
                                                                     Environment environment) {
        return () -> {
            for (String name : beanFactory.getBeanNamesForType(FenceStore.class, true, false)) {
                if (!StarterBeans.madeByStarter(beanFactory, name)
                        && InMemoryFenceStore.class.isAssignableFrom(userType(beanFactory, name))) {
                    log.warn("The application's FenceStore bean '" + name + "' is an InMemoryFenceStore, which fences "
                            + "writes made inside this JVM only; for tests and demos, never for a resource shared by "
                            + "several instances (their zombies' writes land). Use a JdbcFenceStore "
                            + "(fencing.store.type=jdbc) where instances share the resource");
                }
            }
            String[] issuers = beanFactory.getBeanNamesForType(TokenIssuer.class, true, false);
            String type = environment.getProperty(OnFencingTypeCondition.ISSUER_TYPE);
            List<String> ignored = new ArrayList<>();
            if (type != null && !type.strip().equalsIgnoreCase("none")) {
                ignored.add(OnFencingTypeCondition.ISSUER_TYPE + "=" + type);
            }
            boolean offset = environment.containsProperty(IssuerOffsetPostProcessor.PREFIX + ".base");
            ISSUER_PROPERTIES.stream().filter(environment::containsProperty)
                    .filter(name -> !(offset && name.equals(JdbcOffsetParts.LEASE_TABLE))).forEach(ignored::add);
            boolean own = java.util.Arrays.stream(issuers).anyMatch(name -> !StarterBeans.madeByStarter(beanFactory,
                    name));
            if (!own) {
                otherIssuersProperties(environment, type);
            }
            for (String name : issuers) {
                if (StarterBeans.madeByStarter(beanFactory, name)) {
                    continue;
                }
                if (!ignored.isEmpty()) {
                    log.warn(String.join(", ", ignored) + (ignored.size() == 1 ? " is" : " are") + " set, but the "
                            + "application defines its own TokenIssuer bean '" + name + "', which the starter does "
                            + "not build: " + (ignored.size() == 1 ? "the property has" : "these properties have")
                            + " no effect. Remove the bean to let the starter build the issuer, or set them on your "
                            + "issuer's builder");
                }
                if (InMemoryTokenIssuer.class.isAssignableFrom(userType(beanFactory, name))) {
                    log.warn("The application's TokenIssuer bean '" + name + "' is an InMemoryTokenIssuer, whose "
                            + "locks and tokens are this JVM's own: two instances hold one lock at once and count "
                            + "their tokens apart; for tests and demos only. Use a lock service the instances share "
                            + "(fencing.issuer.type=jdbc, zookeeper or etcd)");
                }
            }
        };
    }

    /**
     * Warns of properties of another issuer type than {@code fencing.issuer.type} (the starter's issuer reads none of
     * them): {@code fencing.issuer.zookeeper.*} beside {@code type=jdbc}, say. The lease table's name stays meaningful
     * beside an issuer offset, whose first start reads the previous issuer's lease table, and beside ZooKeeper or etcd,
     * whose startup check reads it (a move from the lease table names the old table there).
     */
    static void otherIssuersProperties(Environment environment, String type) {
        String chosen = type == null ? "none" : type.strip().toLowerCase(java.util.Locale.ROOT);
        boolean leaseTableRead = environment.containsProperty(IssuerOffsetPostProcessor.PREFIX + ".base")
                || chosen.equals("zookeeper") || chosen.equals("etcd");
        List<String> unused = ISSUER_PROPERTIES.stream()
                .filter(name -> !name.startsWith("fencing.issuer." + chosen + "."))
                .filter(name -> !(leaseTableRead && name.equals(JdbcOffsetParts.LEASE_TABLE)))
                .filter(environment::containsProperty).toList();
        if (!unused.isEmpty()) {
            log.warn(String.join(", ", unused) + (unused.size() == 1 ? " is" : " are") + " set, but "
                    + OnFencingTypeCondition.ISSUER_TYPE + " is " + chosen + ": the starter's issuer reads none of "
                    + (unused.size() == 1 ? "it" : "them") + ". Set " + OnFencingTypeCondition.ISSUER_TYPE
                    + " to the issuer meant, or remove " + (unused.size() == 1 ? "it" : "them"));
        }
    }

    /** The properties the starter builds its issuers from (besides the type), of no effect beside an own issuer. */
    static final List<String> ISSUER_PROPERTIES = List.of("fencing.issuer.jdbc.table",
            "fencing.issuer.jdbc.lease-time", "fencing.issuer.jdbc.initialize-schema",
            "fencing.issuer.zookeeper.connect-string", "fencing.issuer.zookeeper.lock-path",
            "fencing.issuer.zookeeper.session-timeout", "fencing.issuer.etcd.endpoints",
            "fencing.issuer.etcd.lease-ttl", "fencing.issuer.etcd.lock-prefix");

    private static Class<?> userType(ConfigurableListableBeanFactory beanFactory, String name) {
        Class<?> type = beanFactory.getType(name, false);
        return type == null ? Object.class : ClassUtils.getUserClass(type);
    }

    /**
     * What {@code @EnableFencing} imports, when the application did not declare it in this context. A parent
     * context's fencing does not count: its auto-proxy creator and advisors never reach the beans of a child
     * context ({@code SpringApplicationBuilder.child(..)}), whose {@code @Fenced} methods would run unchecked.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnMissingBean(name = FENCING_SUPPORT_BEAN, search = SearchStrategy.CURRENT)
    @EnableFencing
    static class EnableFencingConfiguration {
    }

    /**
     * The {@code fencing.*} properties {@code @EnableFencing} reads, first of every {@link FencingConfigurer}. With the
     * starter's {@code @EnableFencing} and no configurer of the application's, every property applies, defaults
     * included; with the application's own {@code @EnableFencing} (which {@code mode = ASPECTJ} needs) or a
     * configurer of its own, only those set, over the annotation's attributes and that configurer's answers, so that
     * {@code fencing.mode}, {@code fencing.modes.*} and {@code fencing.acquire-timeout} are never silently ignored.
     */
    @Bean
    FencingConfigurer fencingPropertiesConfigurer(FencingProperties properties, Environment environment,
                                                  ObjectProvider<EnableFencingConfiguration> starters,
                                                  ConfigurableListableBeanFactory beans) {
        boolean othersConfigure = beans.getBeanNamesForType(FencingConfigurer.class, true, false).length > 1;
        String factory = "io.r2dbc.spi.ConnectionFactory";
        ClassLoader classLoader = FencingAutoConfiguration.class.getClassLoader();
        boolean r2dbc = ClassUtils.isPresent(factory, classLoader) && beans.getBeanNamesForType(
                ClassUtils.resolveClassName(factory, classLoader), true, false).length > 0;
        return new PropertiesConfigurer(properties,
                starters.getIfAvailable() != null && !othersConfigure ? null : environment, othersConfigure, r2dbc,
                beans);
    }

    /**
     * {@code fencing.issuer.type} set to an issuer whose module, classes or connection settings are missing would
     * leave every {@code @Fenced(acquire = true)} method without locks (or, with none yet, fail on the first one):
     * once every bean is defined, and before any is created, a set type without a {@link TokenIssuer} bean fails
     * startup naming what to add (before the startup checks of the methods, which could only say none is configured).
     */
    static final class IssuerTypeCheck implements BeanFactoryPostProcessor, BeanClassLoaderAware {

        private final FencingProperties.IssuerType type;
        private ClassLoader classLoader = FencingAutoConfiguration.class.getClassLoader();

        IssuerTypeCheck(FencingProperties.IssuerType type) {
            this.type = type;
        }

        @Override
        public void setBeanClassLoader(ClassLoader classLoader) {
            this.classLoader = classLoader;
        }

        @Override
        public void postProcessBeanFactory(ConfigurableListableBeanFactory beans) {
            // a parent context's issuer counts: the starter's issuer configurations back off for it, as the support
            // of a child context (SpringApplicationBuilder.child) takes it from there
            if (type == FencingProperties.IssuerType.NONE || BeanFactoryUtils.beanNamesForTypeIncludingAncestors(beans,
                    TokenIssuer.class, true, false).length > 0) {
                return;
            }
            boolean dataSource = BeanFactoryUtils.beanNamesForTypeIncludingAncestors(beans, DataSource.class, true,
                    false).length > 0;
            throw new FencingConfigurationException(message(type, classLoader, dataSource, hasR2dbc(beans)));
        }

        /** Whether an R2DBC ConnectionFactory bean is defined: Boot then creates no DataSource of its own. */
        private boolean hasR2dbc(ConfigurableListableBeanFactory beans) {
            String factory = "io.r2dbc.spi.ConnectionFactory";
            return ClassUtils.isPresent(factory, classLoader) && beans.getBeanNamesForType(
                    ClassUtils.resolveClassName(factory, classLoader), true, false).length > 0;
        }

        static String message(FencingProperties.IssuerType type, ClassLoader classLoader, boolean hasDataSource) {
            return message(type, classLoader, hasDataSource, false);
        }

        static String message(FencingProperties.IssuerType type, ClassLoader classLoader, boolean hasDataSource,
                              boolean r2dbc) {
            String property = "fencing.issuer.type=" + type.name().toLowerCase(Locale.ROOT);
            String missing = switch (type) {
                case ZOOKEEPER -> missingClasses(classLoader, "dev.fencing:fencing-zookeeper",
                        "dev.fencing.zookeeper.ZooKeeperTokenIssuer", "org.apache.curator.framework.CuratorFramework");
                case ETCD -> missingClasses(classLoader, "dev.fencing:fencing-etcd",
                        "dev.fencing.etcd.EtcdTokenIssuer", "io.etcd.jetcd.Client");
                case JDBC -> {
                    String module = missingClasses(classLoader, "dev.fencing:fencing-jdbc",
                            "dev.fencing.jdbc.JdbcTokenIssuer");
                    if (module != null) {
                        yield module;
                    }
                    // the lease table is reached over JDBC, also in a reactive application on R2DBC
                    String where = "spring.datasource.url (the lease table lives in that database, reached over JDBC)";
                    String reactive = "; a reactive application without a DataSource can take its locks from "
                            + "ZooKeeper or etcd instead (fencing.issuer.type=zookeeper or etcd)";
                    if (!ClassUtils.isPresent("org.springframework.boot.jdbc.EmbeddedDatabaseConnection",
                            classLoader)) {
                        yield "Spring Boot's JDBC support is not on the class path: add org.springframework.boot:"
                                + "spring-boot-starter-jdbc and a JDBC driver" + (hasDataSource ? "" : ", and set "
                                + where) + reactive;
                    }
                    if (!hasDataSource && r2dbc) {
                        yield "the application has no DataSource bean, and Spring Boot creates none while an R2DBC "
                                + "ConnectionFactory is defined, even with spring.datasource.url set: declare a "
                                + "DataSource bean yourself for the lease table (DataSourceBuilder.create()"
                                + ".url(...).build()), and name the R2DBC transaction manager on "
                                + "@Transactional once Boot adds a JDBC one beside it" + reactive;
                    }
                    yield hasDataSource ? null : "the application has no DataSource bean: set " + where + reactive
                            + "; in a test slice that leaves the DataSource out (@WebMvcTest with "
                            + "@AutoConfigureFencing), fencing.issuer.type=none, or a TokenIssuer bean of the test's "
                            + "(new InMemoryTokenIssuer())";
                }
                case NONE -> null;
            };
            return property + " is set but no TokenIssuer bean exists, so @Fenced(acquire = true) methods could "
                    + "not take locks: " + (missing != null ? missing
                    : "the issuer's auto-configuration backed off (fencing.enabled or a condition); define a "
                    + "TokenIssuer bean of your own")
                    + ". Or remove " + property + " if no method acquires.";
        }

        /** What to add when one of {@code classNames} is not on the class path; {@code null} when all are. */
        private static String missingClasses(ClassLoader classLoader, String dependency, String... classNames) {
            for (String className : classNames) {
                if (!ClassUtils.isPresent(className, classLoader)) {
                    return className + " is not on the class path: add the dependency " + dependency
                            + " (its version from the fencing-bom)";
                }
            }
            return null;
        }
    }

    /**
     * The {@code fencing.*} properties {@code @EnableFencing}'s support reads, and a startup failure for Boot users.
     */
    static final class PropertiesConfigurer implements FencingConfigurer, org.springframework.core.Ordered {

        private final FencingProperties properties;
        /** Set when the application declared {@code @EnableFencing}: only the properties it holds apply. */
        private final Environment explicitOnly;

        /** Set when the application has a configurer of its own: its message for a missing store is kept. */
        private final boolean othersConfigure;

        PropertiesConfigurer(FencingProperties properties, Environment explicitOnly) {
            this(properties, explicitOnly, false);
        }

        /** Whether an R2DBC ConnectionFactory bean is defined: Spring Boot then creates no DataSource of its own. */
        private final boolean r2dbc;

        PropertiesConfigurer(FencingProperties properties, Environment explicitOnly, boolean othersConfigure) {
            this(properties, explicitOnly, othersConfigure, false);
        }

        PropertiesConfigurer(FencingProperties properties, Environment explicitOnly, boolean othersConfigure,
                             boolean r2dbc) {
            this(properties, explicitOnly, othersConfigure, r2dbc, null);
        }

        /** The context's beans, to tell the starter's from the application's ({@code null}: none is the starter's). */
        private final ConfigurableListableBeanFactory beans;

        PropertiesConfigurer(FencingProperties properties, Environment explicitOnly, boolean othersConfigure,
                             boolean r2dbc, ConfigurableListableBeanFactory beans) {
            this.properties = properties;
            this.explicitOnly = explicitOnly;
            this.othersConfigure = othersConfigure;
            this.r2dbc = r2dbc;
            this.beans = beans;
        }

        /**
         * {@code fencing.store.in-memory.single-instance=true}, bound as Spring Boot binds properties (the environment
         * variable {@code FENCING_STORE_INMEMORY_SINGLEINSTANCE} too); unset, {@code @EnableFencing}'s check reads the
         * property itself.
         */
        @Override
        public Boolean singleInstance() {
            return properties.getStore().getInMemory().isSingleInstance() ? Boolean.TRUE : null;
        }

        /** The in-memory store the starter built: {@code fencing.store.type=in-memory} made it. */
        @Override
        public String settingOf(String beanName) {
            if (beans == null || !StarterBeans.madeByStarter(beans, beanName)) {
                return null;
            }
            Class<?> type = userType(beans, beanName);
            return InMemoryFenceStore.class.isAssignableFrom(type)
                    || type.getName().equals("dev.fencing.reactive.InMemoryReactiveFenceStore")
                    ? "fencing.store.type=in-memory" : null;
        }

        @Override
        public String sharedStoreAdvice(boolean reactive) {
            return "fencing.store.type=jdbc (the default), or a JdbcFenceStore bean" + (reactive ? " (for reactive "
                    + "@Fenced methods: an R2dbcFenceStore, which fencing.store.type=jdbc makes on the R2DBC "
                    + "ConnectionFactory)" : "");
        }

        /** First of the configurers: a property set explicitly is never overridden. */
        @Override
        public int getOrder() {
            return HIGHEST_PRECEDENCE;
        }

        /** Read before every configurer of the application's, even one of the highest precedence. */
        @Override
        public boolean explicitSettings() {
            return true;
        }

        @Override
        public Duration acquireTimeout() {
            return applies("fencing.acquire-timeout") ? properties.getAcquireTimeout() : null;
        }

        @Override
        public FenceMode defaultFenceMode() {
            return applies("fencing.mode") ? FenceMode.parse(properties.getMode(), "fencing.mode") : null;
        }

        private boolean applies(String property) {
            return explicitOnly == null || explicitOnly.containsProperty(property);
        }

        @Override
        public Map<String, FenceMode> fenceModes() {
            Map<String, FenceMode> modes = new LinkedHashMap<>();
            properties.getModes().forEach((resource, mode) ->
                    modes.put(resource, FenceMode.parse(mode, "fencing.modes." + resource)));
            return modes;
        }

        @Override
        public String missingStoreMessage() {
            if (othersConfigure) {
                return null; // the application's configurer says it (or the plain Spring message does)
            }
            ClassLoader classLoader = getClass().getClassLoader();
            return missingStoreMessage(ClassUtils.isPresent(JDBC_STORE_CLASS, classLoader),
                    ClassUtils.isPresent("reactor.core.publisher.Mono", classLoader), r2dbc);
        }

        /**
         * The fix for a missing store; in an application with Reactor (a WebFlux one, say) the reactive store's first,
         * since its {@code @Fenced} methods are likely all reactive and then need no {@code FenceStore}.
         */
        static String missingStoreMessage(boolean jdbcPresent, boolean reactorPresent) {
            return missingStoreMessage(jdbcPresent, reactorPresent, false);
        }

        /**
         * As above; {@code r2dbc}: an R2DBC ConnectionFactory bean is defined, so Spring Boot creates no DataSource,
         * even with {@code spring.datasource.url} set, and the blocking fix is a DataSource bean of the application's.
         */
        static String missingStoreMessage(boolean jdbcPresent, boolean reactorPresent, boolean r2dbc) {
            String cause = jdbcPresent
                    ? "fencing-jdbc is on the classpath but the application has no DataSource bean"
                    + (r2dbc ? ", and Spring Boot creates none while an R2DBC ConnectionFactory is defined, even "
                    + "with spring.datasource.url set" : "")
                    : "fencing-jdbc is not on the classpath";
            String blocking = "For blocking @Fenced methods add "
                    + (jdbcPresent ? "" : "the dependency dev.fencing:fencing-jdbc and ")
                    + (r2dbc
                    ? "a DataSource bean of your own (spring-boot-starter-jdbc, a JDBC driver and "
                    + "DataSourceBuilder.create().url(...).build(), with the fence table fencing_max_seen or the one "
                    + "fencing.store.jdbc.table names; then name the R2DBC transaction manager on @Transactional, "
                    + "see docs/reactive.md), or declare your own FenceStore bean. "
                    : "a database (spring.datasource.url, with the fence table fencing_max_seen or the one "
                    + "fencing.store.jdbc.table names: see the README), or declare your own FenceStore bean. ");
            String reactive = "For @Fenced methods returning a Mono or Flux add the dependency "
                    + "dev.fencing:fencing-r2dbc and an R2DBC database (spring.r2dbc.url): "
                    + "they are checked by the ReactiveFenceStore the starter then defines, "
                    + "and an application whose @Fenced methods are all reactive needs no FenceStore. ";
            return "The fencing starter found no FenceStore for the @Fenced methods (" + cause + "). Tokens must be "
                    + "checked where the writes land, by every instance of the application, so fencing needs a shared "
                    + "store. " + (reactorPresent ? reactive + blocking : blocking + reactive)
                    + "For tests and demos in a single JVM only, and test slices that leave the DataSource out "
                    + "(@WebMvcTest with @AutoConfigureFencing): fencing.store.type=in-memory. To run @Fenced methods "
                    + "unchecked: fencing.enabled=false.";
        }
    }
}
