package dev.fencing.spring.support;

import dev.fencing.guard.FenceBracket;
import dev.fencing.store.BracketFenceStore;
import dev.fencing.token.FencingToken;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;

/**
 * The fence on the Spring proxy path: resolves the invoked method's fence (cached) and runs the invocation inside
 * it. A fence the guard offers as a {@link FenceBracket} (a checking point on a store that fences a write its caller
 * runs, such as the in-memory store) is run here around this interceptor's own {@code proceed()}, as the woven
 * aspect runs it; every other fence goes through the guard with the invocation as its callback. No per-call
 * reflection, parsing or meter lookup. Holds the shared {@link FencingSupport} only, which looks up the store, issuer
 * and meter registry on first use, so creating this interceptor (while bean post-processors are registered) creates
 * none of the application's beans.
 */
final class FencingInterceptor implements MethodInterceptor {

    private final FencingSupport support;

    FencingInterceptor(FencingSupport support) {
        this.support = support;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        // the target's own class: fence points are resolved against its user type once and cached per class; for a
        // target that is itself a JDK proxy (a Spring Data repository) that is the proxied interface, not $ProxyNN
        Class<?> targetClass = target != null ? target.getClass() : null;
        Object fence = support.fenceFor(invocation.getMethod(), targetClass);
        if (fence instanceof FenceBracket bracket && bracket.enforcing()) {
            // the protocol of FenceBracket: the target runs in this frame, as it does through a no-op interceptor
            FencingToken token = bracket.token(invocation.getArguments());
            BracketFenceStore.Entry entry = bracket.enter(token);
            Object result;
            try {
                result = invocation.proceed();
            } catch (Throwable t) {
                throw bracket.failed(entry, token, t);
            }
            bracket.exit(entry);
            return result;
        }
        // an unbound method reference captures nothing: no per-call lambda (a captured invocation::proceed would
        // not always be scalar-replaced)
        return support.invoke(fence, invocation.getArguments(), invocation, MethodInvocation::proceed);
    }
}
