package dev.fencing.spring.support;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ApplicationListener;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.event.ContextRefreshedEvent;
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
 * starter's switch, which warns) turns it off. Plain Spring contexts do not read that file.
 */
public class FencingNotEnabledCheck implements ApplicationContextInitializer<ConfigurableApplicationContext> {

    @Override
    public void initialize(ConfigurableApplicationContext context) {
        context.addApplicationListener(new RefreshListener(context));
    }

    /**
     * Runs the check when {@code context} is refreshed. A class, not a lambda: Spring reads the event type from its
     * generic interface and hands it refresh events only. A lambda's type is erased, so Spring would call it with every
     * event (one {@code ServletRequestHandledEvent} per web request) and swallow the {@link ClassCastException} of
     * each, a stack trace filled per request.
     */
    static final class RefreshListener implements ApplicationListener<ContextRefreshedEvent> {
        private final ConfigurableApplicationContext context;

        RefreshListener(ConfigurableApplicationContext context) {
            this.context = context;
        }

        @Override
        public void onApplicationEvent(ContextRefreshedEvent event) {
            if (event.getApplicationContext() == context) {
                check(context);
            }
        }
    }

    private static void check(ConfigurableApplicationContext context) {
        if ("false".equalsIgnoreCase(context.getEnvironment().getProperty("fencing.enabled", "true").trim())) {
            return;
        }
        ConfigurableListableBeanFactory factory = context.getBeanFactory();
        if (factory.containsBean(FencingSupportConfiguration.SUPPORT_BEAN)) {
            return;
        }
        Set<String> fenced = new LinkedHashSet<>();
        for (String name : factory.getBeanDefinitionNames()) {
            Class<?> type = factory.getType(name, false);
            if (type != null) {
                for (Class<?> candidate : Proxy.isProxyClass(type) ? type.getInterfaces()
                        : new Class<?>[] {ClassUtils.getUserClass(type)}) {
                    String found = fencedMethod(candidate);
                    if (found != null) {
                        fenced.add(found);
                    }
                }
            }
            if (fenced.size() >= 3) {
                break;
            }
        }
        if (!fenced.isEmpty()) {
            throw new FencingConfigurationException("Beans of this application have @Fenced methods (for example "
                    + String.join(", ", fenced) + (fenced.size() >= 3 ? ", and maybe more" : "") + "), but fencing "
                    + "is not enabled, so no lock is taken and no token checked: their writes would run unchecked. "
                    + "In a Spring Boot application add the dependency dev.fencing:fencing-spring-boot-starter; "
                    + "otherwise add @EnableFencing to a @Configuration class. To run them unchecked on purpose: "
                    + "fencing.enabled=false.");
        }
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
