package dev.fencing.spring.support;

import dev.fencing.FencingConfigurationException;
import dev.fencing.guard.FenceGuard;
import dev.fencing.guard.FencePoint;
import dev.fencing.reactive.ReactiveFenceGuard;
import dev.fencing.reactive.ReactiveFenceStore;
import dev.fencing.reactive.ReactiveTokenIssuer;
import dev.fencing.token.FencingToken;
import org.aopalliance.intercept.MethodInvocation;
import org.reactivestreams.Publisher;
import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.core.ReactiveAdapter;
import reactor.core.publisher.Flux;

import java.util.function.Supplier;

/**
 * The {@link ReactiveFencer} on Project Reactor: runs a reactive fenced method through the {@link ReactiveFenceGuard},
 * its body invoked on each subscription inside the store's atomic unit (as Spring's reactive transaction interceptor
 * defers its body), and hands the result back as the method's own reactive type. Loaded only when Reactor and
 * fencing-reactor are present ({@link ReactiveReturnTypes#FENCING_REACTOR}).
 */
final class ReactorFencer implements ReactiveFencer {

    static final String NO_STORE_MESSAGE = "no ReactiveFenceStore bean: a reactive @Fenced method is checked by "
            + "a reactive store, atomically with the write its publisher makes; declare a ReactiveFenceStore bean, "
            + "e.g. the R2dbcFenceStore of fencing-r2dbc, or, for tests and demos in a single JVM, an "
            + "InMemoryReactiveFenceStore";

    /**
     * The guard's store when the application has none: only acquiring points are served then ({@link #validate}
     * refuses checking ones at startup), and they never check, so this refuses anything that reaches it.
     */
    private static final ReactiveFenceStore NO_STORE = new ReactiveFenceStore() {
        @Override
        public <T> Flux<T> fence(String resource, FencingToken token, Flux<T> write) {
            return Flux.error(new FencingConfigurationException("Resource '" + resource + "' (token " + token
                    + ") reached a reactive check, and there is " + NO_STORE_MESSAGE));
        }
    };

    private final ReactiveFenceGuard guard;
    private final ReactiveFenceStore store;
    /** Why acquiring points cannot work (a reactive issuer bean the signer cannot sign), or {@code null}. */
    private final String acquireProblem;

    ReactorFencer(ReactiveFenceGuard guard, ReactiveFenceStore store, String acquireProblem) {
        this.guard = guard;
        this.store = store;
        this.acquireProblem = acquireProblem;
    }

    /**
     * The factory looking up, in {@code beanFactory}, the {@link ReactiveFenceStore} bean (required) and a
     * {@link ReactiveTokenIssuer} bean, or else adapting the blocking issuer with
     * {@link ReactiveTokenIssuer#fromBlocking}.
     */
    static ReactiveFencerFactory factory(BeanFactory beanFactory) {
        return (issuer, acquireTimeout, rejections, verifier, modes) -> {
            ReactiveFenceStore store = TokenSigning.unique(beanFactory.getBeanProvider(ReactiveFenceStore.class),
                    ReactiveFenceStore.class);
            ReactiveTokenIssuer reactiveIssuer = TokenSigning.unique(
                    beanFactory.getBeanProvider(ReactiveTokenIssuer.class), ReactiveTokenIssuer.class);
            String acquireProblem = null;
            if (reactiveIssuer == null && issuer != null) {
                reactiveIssuer = ReactiveTokenIssuer.fromBlocking(issuer); // signed, when signing is on
            } else if (reactiveIssuer != null && verifier != null) {
                acquireProblem = "tokens are verified (a TokenVerifier bean), but the ReactiveTokenIssuer bean is "
                        + "not signed by the TokenSigner, so every token it issues would be refused as forged; "
                        + "remove the ReactiveTokenIssuer bean (the TokenIssuer bean is then adapted and signed)";
            }
            // without a store, only acquiring points (a caller of other services) can be served: they check nothing
            ReactiveFenceGuard guard = ReactiveFenceGuard.builder(store != null ? store : NO_STORE)
                    .issuer(reactiveIssuer)
                    .acquireTimeout(acquireTimeout).rejectionListener(rejections).verifier(verifier)
                    .modes(modes)
                    .observations(beanFactory.getBeanProvider(io.micrometer.observation.ObservationRegistry.class)
                            .getIfUnique())
                    .build();
            return new ReactorFencer(guard, store, acquireProblem);
        };
    }

    @Override
    public void validate(FencePoint point) {
        if (!point.acquire() && store == null) {
            throw new FencingConfigurationException("@Fenced on " + point.operation() + " checks tokens for resource '"
                    + point.resource() + "' when its publisher is subscribed, and there is " + NO_STORE_MESSAGE);
        }
        guard.validate(point);
        if (point.acquire() && acquireProblem != null) {
            throw new FencingConfigurationException("@Fenced(acquire = true) on " + point.operation() + ": "
                    + acquireProblem);
        }
    }

    @Override
    public <C> Object invoke(FencePoint point, ReactiveAdapter adapter, Object[] args, C target,
                             FenceGuard.Proceed<C, Object> proceed) {
        Supplier<Publisher<Object>> body;
        if (target instanceof ProxyMethodInvocation invocation) {
            // the proxy's chain goes on later, once per subscription: from a copy made now, at this interceptor
            MethodInvocation base = invocation.invocableClone();
            body = body(point, adapter, base, ReactorFencer::proceedCopy);
        } else {
            body = body(point, adapter, target, proceed);
        }
        Flux<Object> fenced = guard.fence(point, args, body);
        // a single-value type gets a publisher that completes (Mono.from would cancel after the value, and a
        // transactional store would roll back on that cancel)
        return adapter.fromPublisher(adapter.isMultiValue() ? fenced : fenced.singleOrEmpty());
    }

    /**
     * Proceeds with {@code invocation} now, as a call without this would, and returns its publisher such that every
     * subscription after the first runs the chain again from a copy made here ({@link ResubscribingAdvisor}): an
     * interceptor further in that proceeds once per subscription (Spring's reactive transactions) then reaches the
     * fence each time instead of the target alone.
     */
    static Object resubscribing(ProxyMethodInvocation invocation, ReactiveAdapter adapter) throws Throwable {
        MethodInvocation base = invocation.invocableClone();
        Object first = invocation.proceed();
        if (first == null) {
            return null;
        }
        Publisher<Object> firstPublisher = adapter.toPublisher(first);
        java.util.concurrent.atomic.AtomicBoolean firstTaken = new java.util.concurrent.atomic.AtomicBoolean();
        Flux<Object> each = Flux.defer(() -> {
            if (firstTaken.compareAndSet(false, true)) {
                return firstPublisher;
            }
            Object again;
            try {
                again = proceedCopy(base);
            } catch (Throwable t) {
                return Flux.error(t);
            }
            return again == null ? Flux.error(new IllegalStateException(invocation.getMethod() + " returned null "
                    + "instead of a " + adapter.getReactiveType().getSimpleName())) : adapter.toPublisher(again);
        });
        // as in invoke: a single-value type completes rather than cancels after its value
        return adapter.fromPublisher(adapter.isMultiValue() ? each : each.singleOrEmpty());
    }

    private static Object proceedCopy(MethodInvocation base) throws Throwable {
        return ((ProxyMethodInvocation) base).invocableClone().proceed();
    }

    private static <C> Supplier<Publisher<Object>> body(FencePoint point, ReactiveAdapter adapter, C target,
                                                       FenceGuard.Proceed<C, Object> proceed) {
        return () -> {
            Object result;
            try {
                result = proceed.proceed(target);
            } catch (Throwable t) {
                return Flux.error(t);
            }
            if (result == null) {
                return Flux.error(new IllegalStateException(point.operation() + " returned null instead of a "
                        + adapter.getReactiveType().getSimpleName()));
            }
            return adapter.toPublisher(result);
        };
    }

    @Override
    public void verifyStore() {
        if (store != null) {
            store.verify();
        }
    }
}
