package dev.fencing.spring.support;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.BeanDefinitionRegistryPostProcessor;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Fails the startup of a Spring Boot application whose beans have {@code @Fenced} methods while fencing is not
 * enabled in it (no {@code @EnableFencing}, no starter): those writes would run unchecked. Registered in
 * {@code META-INF/spring.factories}, which {@code SpringApplication} reads; {@code fencing.enabled=false} (the
 * starter's switch) turns it off and warns. Mockito mocks are left out (a {@code @MockitoBean} in a test runs none of
 * the code it stands for). Plain Spring contexts do not read that file.
 *
 * <p>The check runs once every singleton exists, as a {@link SmartInitializingSingleton} registered ahead of the
 * application's bean definitions: before any lifecycle bean starts (a message listener container consuming a
 * backlog, a scheduler, the embedded web server), so none of those writes runs unchecked before startup fails, and
 * while the singletons show their actual classes (a {@code @Bean} declared by an interface included).
 */
public class FencingNotEnabledCheck implements ApplicationContextInitializer<ConfigurableApplicationContext> {

    /** The bean name of the check, registered in each context this initializer is applied to. */
    static final String CHECK_BEAN = "dev.fencing.internalFencingNotEnabledCheck";

    /** The starter's auto-configuration: on the class path, a context without the fence left it out. */
    private static final String STARTER_CONFIGURATION = "dev.fencing.boot.autoconfigure.FencingAutoConfiguration";

    /** The starter's configuration that warns of {@code fencing.enabled=false} (its bean name is its class name). */
    private static final String DISABLED_WARNING_BEAN =
            "dev.fencing.boot.autoconfigure.FencingDisabledAutoConfiguration";

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        context.addBeanFactoryPostProcessor(new Registrar());
    }

    /**
     * Registers the {@link StartupCheck} bean before the configuration classes register theirs, so that it runs
     * ahead of the application's own {@link SmartInitializingSingleton}s. A bean definition of its class, not an
     * instance: a singleton registered by hand is not called back, and ahead-of-time processing writes the
     * definition into the generated code (this registrar then finds it there).
     */
    static final class Registrar implements BeanDefinitionRegistryPostProcessor {
        @Override
        public void postProcessBeanDefinitionRegistry(BeanDefinitionRegistry registry) {
            if (!registry.containsBeanDefinition(CHECK_BEAN)) {
                RootBeanDefinition check = new RootBeanDefinition(StartupCheck.class);
                check.setRole(BeanDefinition.ROLE_INFRASTRUCTURE);
                check.setLazyInit(false); // spring.main.lazy-initialization leaves a definition that says so
                registry.registerBeanDefinition(CHECK_BEAN, check);
            }
        }

        @Override
        public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
        }
    }

    /**
     * Internal: the check, run by the context once every singleton exists, before its lifecycle beans start; a
     * bean of {@link FencingNotEnabledCheck}'s registration, not for applications.
     */
    public static final class StartupCheck implements SmartInitializingSingleton, ApplicationContextAware {
        private ConfigurableApplicationContext context;

        @Override
        public void setApplicationContext(ApplicationContext applicationContext) {
            this.context = applicationContext instanceof ConfigurableApplicationContext configurable
                    ? configurable : null;
        }

        @Override
        public void afterSingletonsInstantiated() {
            if (context != null) {
                check(context);
            }
        }
    }

    private static void check(ConfigurableApplicationContext context) {
        ConfigurableListableBeanFactory factory = context.getBeanFactory();
        // not trimmed: the starter's conditions compare the text as it is, so 'true ' turns it neither on nor off
        String enabled = context.getEnvironment().getProperty("fencing.enabled", "true");
        if (!enabled.equalsIgnoreCase("true") && !enabled.equalsIgnoreCase("false")) {
            // the starter's switches read true or false only: 'yes' or 'on' would turn fencing neither on nor off
            throw new FencingConfigurationException("fencing.enabled is '" + enabled + "', which is neither true nor "
                    + "false: the starter reads only those, so fencing would be neither on nor off. Set it to true "
                    + "(or remove it), or to false to run @Fenced methods unchecked on purpose.");
        }
        boolean disabled = enabled.equalsIgnoreCase("false");
        // this context's own: a parent context's fencing never advises the beans of a child context
        if (disabled ? factory.containsLocalBean(DISABLED_WARNING_BEAN)
                : factory.containsLocalBean(FencingSupportConfiguration.SUPPORT_BEAN)) {
            return;
        }
        Set<String> fenced = fencedBeans(factory, context.getClassLoader());
        if (fenced.isEmpty()) {
            return;
        }
        String examples = String.join(", ", fenced) + (fenced.size() >= 3 ? ", and maybe more" : "");
        if (disabled) {
            // the starter's warning did not run (a test slice without fencing's auto-configuration)
            LogFactory.getLog(FencingNotEnabledCheck.class).warn("fencing.enabled=false: every @Fenced method runs "
                    + "unchecked (for example " + examples + "); remove the property to turn fencing back on");
            return;
        }
        if (ClassUtils.isPresent(STARTER_CONFIGURATION, context.getClassLoader())) {
            throw new FencingConfigurationException("Beans of this application have @Fenced methods (for example "
                    + examples + "), and the fencing starter is on the class path, but its auto-configuration did "
                    + "not run in this context, so no lock is taken and no token checked: their writes would run "
                    + "unchecked. A Spring Boot test slice (@WebMvcTest, @WebFluxTest, @JsonTest, ...) leaves it out: "
                    + "add @AutoConfigureFencing (dev.fencing.boot.autoconfigure) to the test class, or replace the "
                    + "fenced beans with @MockitoBean mocks; in an application, an exclusion of "
                    + "FencingAutoConfiguration leaves it out (remove it).");
        }
        throw new FencingConfigurationException("Beans of this application have @Fenced methods (for example "
                + examples + "), but fencing is not enabled, so no lock is taken and no token checked: their "
                + "writes would run unchecked. In a Spring Boot application add the dependency "
                + "dev.fencing:fencing-spring-boot-starter; otherwise add @EnableFencing to a @Configuration class. "
                + "To run them unchecked on purpose: fencing.enabled=false.");
    }

    /**
     * Up to three {@code @Fenced} methods (or types) of the beans of {@code factory}, leaving out Mockito mocks that
     * are not spies: a mock runs none of the code it stands for, so it writes nothing to fence.
     */
    private static Set<String> fencedBeans(ConfigurableListableBeanFactory factory, ClassLoader classLoader) {
        Set<String> fenced = new LinkedHashSet<>();
        TestDoubles doubles = TestDoubles.of(classLoader);
        for (String name : factory.getBeanDefinitionNames()) {
            Class<?> type = factory.getType(name, false);
            if (type == null || (factory.containsSingleton(name) && doubles.isStub(factory.getSingleton(name)))) {
                continue;
            }
            for (Class<?> candidate : Proxy.isProxyClass(type) ? type.getInterfaces()
                    : new Class<?>[] {ClassUtils.getUserClass(type)}) {
                String found = fencedMethod(candidate);
                if (found != null) {
                    fenced.add(found);
                }
            }
            if (fenced.size() >= 3) {
                break;
            }
        }
        return fenced;
    }

    /** {@code Type.method(..)} of a {@code @Fenced} method of {@code type}, or {@code null}. */
    private static String fencedMethod(Class<?> type) {
        if (!AnnotationUtils.isCandidateClass(type, Fenced.class)) {
            return null;
        }
        if (MergedAnnotations.from(type, SearchStrategy.TYPE_HIERARCHY).isPresent(Fenced.class)) {
            return "type " + type.getName();
        }
        for (Method method : ReflectionUtils.getUniqueDeclaredMethods(type, ReflectionUtils.USER_DECLARED_METHODS)) {
            if (MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY).isPresent(Fenced.class)) {
                return ClassUtils.getShortName(type) + "." + method.getName() + "(..)";
            }
        }
        return null;
    }
}
