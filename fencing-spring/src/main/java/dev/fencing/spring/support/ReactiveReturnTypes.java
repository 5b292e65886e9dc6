package dev.fencing.spring.support;

import dev.fencing.guard.AsyncReturnTypes;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.util.ClassUtils;

/**
 * Which fenced methods are reactive: those whose return type Spring's {@link ReactiveAdapterRegistry} adapts (Mono,
 * Flux, any Reactive Streams Publisher, RxJava types), except {@code Future}, {@code CompletionStage}, Kotlin's
 * {@code Flow} and {@code java.util.concurrent.Flow.Publisher}, which are left to {@link AsyncReturnTypes} and the
 * {@code @Async} check. Decides without loading Reactor, so it is safe on a
 * blocking application's class path.
 */
final class ReactiveReturnTypes {

    private static final ClassLoader LOADER = ReactiveReturnTypes.class.getClassLoader();

    private static final String REACTIVE_STREAMS_PUBLISHER = "org.reactivestreams.Publisher";

    private static final boolean REACTIVE_STREAMS = ClassUtils.isPresent(REACTIVE_STREAMS_PUBLISHER, LOADER);

    /** Whether the reactive fence can be built: Reactor and fencing-reactor are both present. */
    static final boolean FENCING_REACTOR = REACTIVE_STREAMS
            && ClassUtils.isPresent("reactor.core.publisher.Flux", LOADER)
            && ClassUtils.isPresent("dev.fencing.reactive.ReactiveFenceGuard", LOADER);

    private ReactiveReturnTypes() {
    }

    /** The adapter for a reactive return type, or {@code null} for any other (refused or not by AsyncReturnTypes). */
    static ReactiveAdapter adapterFor(Class<?> returnType) {
        if (!REACTIVE_STREAMS) {
            return null;
        }
        String deferred = AsyncReturnTypes.deferredType(returnType);
        if (deferred != null && !deferred.equals(REACTIVE_STREAMS_PUBLISHER)) {
            return null; // Future, CompletionStage, Kotlin Flow, Flow.Publisher: refused at startup
        }
        return ReactiveAdapterRegistry.getSharedInstance().getAdapter(returnType);
    }

    /** Whether {@code beanFactory} defines a {@code ReactiveFenceStore} bean (looked up by type, not created). */
    static boolean hasReactiveStore(BeanFactory beanFactory) {
        if (!FENCING_REACTOR || !(beanFactory instanceof ListableBeanFactory beans)) {
            return false;
        }
        Class<?> store = ClassUtils.resolveClassName("dev.fencing.reactive.ReactiveFenceStore", LOADER);
        return beans.getBeanNamesForType(store, true, false).length > 0;
    }

    /** The factory of the reactive fence: {@link ReactorFencer}'s when it can be built, else one that says why not. */
    static ReactiveFencerFactory factory(BeanFactory beanFactory) {
        return FENCING_REACTOR ? ReactorFencer.factory(beanFactory) : ReactiveFencerFactory.ABSENT;
    }
}
