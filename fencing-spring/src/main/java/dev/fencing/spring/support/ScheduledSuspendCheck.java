package dev.fencing.spring.support;

import dev.fencing.FencingConfigurationException;
import dev.fencing.guard.AsyncReturnTypes;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.scheduling.annotation.Schedules;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import java.util.ArrayList;
import java.util.List;

/**
 * Fails startup when a bean has a Kotlin {@code suspend} function annotated {@code @Scheduled}, unless
 * {@code fencing.kotlin.allow-scheduled-suspend-functions} is set. Spring runs such a function on
 * {@code Dispatchers.Unconfined} with no fencing context of its own, and Reactor's context propagation does not give
 * it one: after a suspension it resumes on whichever thread woke it, possibly inside another request's fenced work,
 * and a fenced call made there directly is checked with that work's token (a job with no lock wrote under another
 * request's, in a trial). Checks nothing without Kotlin on the class path.
 */
final class ScheduledSuspendCheck implements SmartInitializingSingleton {

    /** The property that allows them (read from the {@code Environment}; the starter also knows it). */
    static final String ALLOW = "fencing.kotlin.allow-scheduled-suspend-functions";

    private final ConfigurableListableBeanFactory beans;
    private final boolean allowed;

    ScheduledSuspendCheck(ConfigurableListableBeanFactory beans, boolean allowed) {
        this.beans = beans;
        this.allowed = allowed;
    }

    @Override
    public void afterSingletonsInstantiated() {
        if (allowed || !ClassUtils.isPresent(SuspendingHandlersCheck.CONTINUATION, getClass().getClassLoader())) {
            return;
        }
        List<String> found = new ArrayList<>();
        for (String name : beans.getBeanDefinitionNames()) {
            try {
                scan(name, found);
            } catch (RuntimeException | LinkageError unreadable) {
                // a bean whose type cannot be resolved, or whose methods name a class that is not there (an optional
                // dependency of an infrastructure bean): skipped; Spring's own scheduling reads the same methods, and
                // fails first on such a class if it has @Scheduled functions
            }
        }
        if (found.isEmpty()) {
            return;
        }
        throw new FencingConfigurationException("This application has @Scheduled Kotlin suspend functions ("
                + SuspendingHandlersCheck.firstNames(found)
                + "). Spring runs them on Dispatchers.Unconfined with no fencing context of their own, and Reactor's "
                + "context propagation does not give them one: after a suspension (a Mutex, delay) such a function "
                + "resumes on whichever thread woke it, possibly inside another request's fenced work, and a fenced "
                + "call it makes there directly is checked with that work's token, so its write can be accepted "
                + "without a lock of its own. Make it a regular @Scheduled function (a ShedLock job or an "
                + "@Fenced(acquire = true) method takes its lock), or make its fenced calls only inside "
                + "withContext(Dispatchers.IO), where no other work's tokens are bound, and then set " + ALLOW
                + "=true");
    }

    /** Adds the {@code @Scheduled} suspend functions of bean {@code name}'s class to {@code found}. */
    private void scan(String name, List<String> found) {
        Class<?> type = beans.getType(name, false);
        if (type == null) {
            return;
        }
        ReflectionUtils.doWithMethods(ClassUtils.getUserClass(type), method -> {
            if (AsyncReturnTypes.isSuspending(method.getParameterTypes())
                    && (AnnotatedElementUtils.hasAnnotation(method, Scheduled.class)
                    || AnnotatedElementUtils.hasAnnotation(method, Schedules.class))) {
                String described = ClassUtils.getShortName(method.getDeclaringClass()) + "." + method.getName();
                if (!found.contains(described)) {
                    found.add(described);
                }
            }
        }, ReflectionUtils.USER_DECLARED_METHODS);
    }
}
