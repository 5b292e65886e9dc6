package dev.fencing.spring.support;

import dev.fencing.guard.FenceBracket;
import dev.fencing.store.BracketFenceStore;
import dev.fencing.token.FencingToken;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;

import java.lang.reflect.Method;

/**
 * The fence on the Spring proxy path: resolves the invoked method's fence (cached) and runs the invocation inside
 * it. A fence the guard offers as a {@link FenceBracket} (a checking point on a store that fences a write its caller
 * runs, such as the in-memory store) is run here around this interceptor's own {@code proceed()}, as the woven
 * aspect runs it; every other fence goes through the guard with the invocation as its callback. No per-call
 * reflection, parsing or meter lookup. Holds the shared {@link FencingSupport} only, which looks up the store, issuer
 * and meter registry on first use, so creating this interceptor (while bean post-processors are registered) creates
 * none of the application's beans.
 *
 * <p>The {@link FencingAdvisor} hands a new one to every advice chain Spring builds, that is one per proxy and method,
 * so each remembers the fence of the first call it runs ({@link Known}) and finds it again by two reference
 * comparisons, without the support's table. A call of another {@code Method} instance or target class (an
 * interceptor shared by several methods) is looked up in the support's table as before: the remembered fence is only
 * ever used for the very {@code Method} instance and class it was looked up for.
 */
final class FencingInterceptor implements MethodInterceptor {

    private final FencingSupport support;
    /**
     * The fence of the first call (of one of the first calls, when several race: each is right); read without a lock:
     * a {@link Known} seen through a race is whole (final fields), and a thread that sees none looks the fence up.
     */
    private Known known;

    FencingInterceptor(FencingSupport support) {
        this.support = support;
    }

    @Override
    public Object invoke(MethodInvocation invocation) throws Throwable {
        Object target = invocation.getThis();
        // the target's own class: fence points are resolved against its user type once and cached per class; for a
        // target that is itself a JDK proxy (a Spring Data repository) that is the proxied interface, not $ProxyNN
        Class<?> targetClass = target != null ? target.getClass() : null;
        Method method = invocation.getMethod();
        Known first = known;
        Object fence;
        if (first != null && first.method == method && first.type == targetClass) {
            fence = first.fence;
        } else {
            fence = support.fenceFor(method, targetClass);
            if (first == null) {
                known = new Known(method, targetClass, fence);
            }
        }
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

    /** A fence and the {@code Method} instance and target class it was looked up for. */
    private record Known(Method method, Class<?> type, Object fence) {
    }
}
