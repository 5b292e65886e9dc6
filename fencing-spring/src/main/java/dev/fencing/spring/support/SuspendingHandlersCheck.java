package dev.fencing.spring.support;

import dev.fencing.FencingConfigurationException;
import dev.fencing.guard.AsyncReturnTypes;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.util.ClassUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.handler.AbstractHandlerMethodMapping;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Fails startup when a servlet application has Kotlin {@code suspend} handler methods and Reactor's automatic context
 * propagation is off. Spring MVC runs such a handler on {@code Dispatchers.Unconfined}: after a suspension it resumes
 * on whichever thread woke it, possibly inside another request's fenced work, whose bound token a fenced call there
 * would be checked with. With propagation on, Spring gives each handler's coroutine its own thread-local context
 * ({@code PropagationContextElement}), the fencing token included, on every resumption. Checks nothing without Kotlin
 * or Spring MVC on the class path.
 */
final class SuspendingHandlersCheck implements SmartInitializingSingleton {

    /** Kotlin's, named: without it there is no suspend function to find. */
    static final String CONTINUATION = "kotlin.coroutines.Continuation";
    private static final String SERVLET_MAPPING =
            "org.springframework.web.servlet.handler.AbstractHandlerMethodMapping";

    private final ListableBeanFactory beans;
    private final BooleanSupplier propagating;

    SuspendingHandlersCheck(ListableBeanFactory beans, BooleanSupplier propagating) {
        this.beans = beans;
        this.propagating = propagating;
    }

    /** The check of an {@code @EnableFencing} context: Reactor's own switch, off when Reactor is not there. */
    static SuspendingHandlersCheck of(ListableBeanFactory beans) {
        ClassLoader loader = SuspendingHandlersCheck.class.getClassLoader();
        boolean reactor = ClassUtils.isPresent("reactor.core.publisher.Hooks", loader);
        return new SuspendingHandlersCheck(beans, () -> reactor && ReactorHooks.propagating());
    }

    @Override
    public void afterSingletonsInstantiated() {
        ClassLoader loader = SuspendingHandlersCheck.class.getClassLoader();
        if (!ClassUtils.isPresent(CONTINUATION, loader) || !ClassUtils.isPresent(SERVLET_MAPPING, loader)
                || propagating.getAsBoolean()) {
            return;
        }
        List<String> suspending = ServletHandlers.suspending(beans);
        if (suspending.isEmpty()) {
            return;
        }
        throw new FencingConfigurationException("This application has Kotlin suspend handler methods ("
                + firstNames(suspending)
                + ") and Reactor's automatic context propagation is off. Spring MVC runs a suspend handler on "
                + "Dispatchers.Unconfined: after it suspends (delay, a Mutex, withContext) it resumes on whichever "
                + "thread woke it, possibly inside another request's fenced work, and a fenced call made there is "
                + "checked with that request's token: a stale or missing token's write could be accepted. Turn "
                + "propagation on, so that Spring carries each request's own context, its fencing token included, "
                + "with its coroutine: call reactor.core.publisher.Hooks.enableAutomaticContextPropagation() in main() "
                + "before SpringApplication.run (or add org.springframework.boot:spring-boot-reactor and set "
                + "spring.reactor.context-propagation=auto)");
    }

    /** The first five of {@code names}, and how many more there are: what a startup failure lists. */
    static String firstNames(List<String> names) {
        int named = Math.min(5, names.size());
        return String.join(", ", names.subList(0, named))
                + (names.size() > named ? " and " + (names.size() - named) + " more" : "");
    }

    /** Spring MVC's types, loaded only once they are known to be there. */
    private static final class ServletHandlers {
        static List<String> suspending(ListableBeanFactory beans) {
            List<String> suspending = new ArrayList<>();
            for (AbstractHandlerMethodMapping<?> mapping
                    : beans.getBeansOfType(AbstractHandlerMethodMapping.class, false, false).values()) {
                for (HandlerMethod handler : mapping.getHandlerMethods().values()) {
                    if (AsyncReturnTypes.isSuspending(handler.getMethod().getParameterTypes())) {
                        suspending.add(handler.toString());
                    }
                }
            }
            return suspending;
        }
    }

    /** Reactor's switch, loaded only once Reactor is known to be there. */
    private static final class ReactorHooks {
        static boolean propagating() {
            return reactor.core.publisher.Hooks.isAutomaticContextPropagationEnabled();
        }
    }
}
