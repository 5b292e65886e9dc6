package dev.fencing.jdbc;

import dev.fencing.FencingConfigurationException;
import dev.fencing.annotation.Fenced;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Finds the one setup mistake a fence store can see from where it sits: beans with {@code @Fenced} methods in a
 * context where nothing checks tokens through the store (no {@code @EnableFencing}, so no advisor or aspect runs the
 * fence), which would let every one of those writes run unchecked. The store calls it once the context is refreshed.
 */
final class UnguardedStoreCheck {

    private UnguardedStoreCheck() {
    }

    /** The bean {@code @EnableFencing} registers (fencing-spring's shared support); its name is its contract. */
    static final String FENCING_SUPPORT_BEAN = "dev.fencing.internalFencingSupport";

    /** Whether {@code @EnableFencing} is on in this bean factory. */
    static boolean fencingEnabled(BeanFactory beanFactory) {
        return beanFactory.containsBean(FENCING_SUPPORT_BEAN);
    }

    /**
     * @throws FencingConfigurationException naming the fenced methods, when {@code beanFactory} has beans with
     *                                       {@code @Fenced} methods (at most a few are named)
     */
    static void requireGuard(BeanFactory beanFactory, String who) {
        if (!(beanFactory instanceof ConfigurableListableBeanFactory factory)) {
            return;
        }
        Set<String> fenced = new LinkedHashSet<>();
        for (String name : factory.getBeanDefinitionNames()) {
            Class<?> type = factory.getType(name, false);
            if (type == null) {
                continue;
            }
            for (Class<?> candidate : userTypes(type)) {
                fencedMethod(candidate).ifPresent(fenced::add);
            }
            if (fenced.size() >= 3) {
                break;
            }
        }
        if (!fenced.isEmpty()) {
            throw new FencingConfigurationException("Beans of this application context have @Fenced methods (for "
                    + "example " + String.join(", ", fenced) + (fenced.size() >= 3 ? ", and maybe more beans" : "")
                    + "), but fencing is not enabled, so no lock is taken and no token checked for any of them: "
                    + "their writes would run unchecked (seen by " + who + "). Add @EnableFencing to a "
                    + "@Configuration class (mode = AdviceMode.ASPECTJ if you weave).");
        }
    }

    private static List<Class<?>> userTypes(Class<?> type) {
        List<Class<?>> types = new ArrayList<>();
        if (Proxy.isProxyClass(type)) {
            for (Class<?> iface : type.getInterfaces()) {
                types.add(iface);
            }
        } else {
            types.add(ClassUtils.getUserClass(type));
        }
        return types;
    }

    private static java.util.Optional<String> fencedMethod(Class<?> type) {
        if (!AnnotationUtils.isCandidateClass(type, Fenced.class)) {
            return java.util.Optional.empty();
        }
        if (MergedAnnotations.from(type, SearchStrategy.TYPE_HIERARCHY).isPresent(Fenced.class)) {
            return java.util.Optional.of("type " + type.getName());
        }
        for (Method method : ReflectionUtils.getUniqueDeclaredMethods(type, ReflectionUtils.USER_DECLARED_METHODS)) {
            if (MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY).isPresent(Fenced.class)) {
                return java.util.Optional.of(ClassUtils.getShortName(type) + "." + method.getName() + "(..)");
            }
        }
        for (Method method : type.getMethods()) { // interface methods a class inherits
            if (MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY).isPresent(Fenced.class)) {
                return java.util.Optional.of(ClassUtils.getShortName(type) + "." + method.getName() + "(..)");
            }
        }
        return java.util.Optional.empty();
    }
}
